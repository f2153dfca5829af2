/**
 * Syntax highlighting with highlight.js (the languages code search meets
 * most), split into lines so each line can carry its number and anchor.
 */
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import css from 'highlight.js/lib/languages/css';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import makefile from 'highlight.js/lib/languages/makefile';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import ruby from 'highlight.js/lib/languages/ruby';
import rust from 'highlight.js/lib/languages/rust';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

const LANGUAGES = { bash, c, cpp, css, go, java, javascript, json, makefile, markdown, python, ruby, rust, typescript, xml, yaml };
for (const [name, language] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, language);

/** Linguist names (what the API reports) → highlight.js names. */
const BY_LINGUIST: Record<string, keyof typeof LANGUAGES> = {
  Shell: 'bash',
  C: 'c',
  'C++': 'cpp',
  CSS: 'css',
  Go: 'go',
  Java: 'java',
  JavaScript: 'javascript',
  JSX: 'javascript',
  JSON: 'json',
  Makefile: 'makefile',
  Markdown: 'markdown',
  Python: 'python',
  Ruby: 'ruby',
  Rust: 'rust',
  TypeScript: 'typescript',
  TSX: 'typescript',
  HTML: 'xml',
  XML: 'xml',
  YAML: 'yaml',
};

const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[ch]!);

/**
 * The source as one HTML fragment per line: highlighted when the language is
 * known (spans that cross a line break are closed and reopened), escaped text
 * otherwise. highlight.js escapes the text itself.
 */
export function highlightLines(source: string, linguistLanguage: string): string[] {
  const language = BY_LINGUIST[linguistLanguage];
  const html = language ? hljs.highlight(source, { language, ignoreIllegals: true }).value : escapeHtml(source);
  const lines: string[] = [];
  const open: string[] = [];
  let line = '';
  for (const token of html.split(/(<span[^>]*>|<\/span>|\n)/)) {
    if (token === '\n') {
      lines.push(line + '</span>'.repeat(open.length));
      line = open.join('');
    } else if (token.startsWith('<span')) {
      open.push(token);
      line += token;
    } else if (token === '</span>') {
      open.pop();
      line += token;
    } else {
      line += token;
    }
  }
  if (line !== '' || lines.length === 0) lines.push(line + '</span>'.repeat(open.length));
  return lines;
}
