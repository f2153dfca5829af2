/**
 * Globs as regular expressions. Name globs of the configuration (branch names,
 * search-context repository names): `*` matches within one `/`-separated
 * segment, `**` across segments, `?` one character; everything else is
 * literal; the whole name must match. File globs (the MCP tools' `include`
 * and `glob`) add `{a,b}` alternatives, and `**` then `/` stands for any
 * number of directories, none included.
 */
export function globToRegExp(glob: string): RegExp {
  return new RegExp(`^${globSource(glob, false)}$`);
}

/** The RE2/JavaScript regex source of a file glob, matched against a whole repository path (`^…$` included). */
export function fileGlobSource(glob: string): string {
  return `^${globSource(glob, true)}$`;
}

function globSource(glob: string, fileGlob: boolean): string {
  let source = '';
  let braces = 0;
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i]!;
    if (char === '*' && glob[i + 1] === '*') {
      const directories = fileGlob && glob[i + 2] === '/';
      source += directories ? '(?:.*/)?' : '.*';
      i += directories ? 2 : 1;
    } else if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else if (fileGlob && char === '{') {
      braces++;
      source += '(?:';
    } else if (fileGlob && char === '}' && braces > 0) {
      braces--;
      source += ')';
    } else if (fileGlob && char === ',' && braces > 0) source += '|';
    else source += char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return source + ')'.repeat(braces);
}
