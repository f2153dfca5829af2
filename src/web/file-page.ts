/**
 * The file and directory views: a file highlighted with line numbers and
 * `#L10` / `#L10-L20` anchors, the matches of the search that led here
 * marked (`?hl=start-end,…` byte ranges), the tree of the repository on the
 * side, a selector of the repository's indexed branches, and definitions / references of a clicked identifier.
 */
import { getJson, postJson, type RepositoryListing, type Source, type SymbolMatches, type TreeNode } from './api.js';
import { clear, copyButton, h } from './dom.js';
import { highlightLines } from './highlight.js';
import { blobUrl, localPath, treeUrl } from './links.js';

export async function renderBlob(main: HTMLElement, repo: string, branch: string, path: string): Promise<void> {
  const [source, tree] = await Promise.all([
    getJson<Source>('/api/source', { repo, path, ref: branch }),
    postJson<{ tree: TreeNode }>('/api/tree', { repoName: repo, revisionName: branch, paths: ancestors(path) }),
  ]);
  clear(main);
  const code = source.encoding === 'base64' ? h('p', { class: 'binary' }, 'Binary file — not shown.') : codeView(source);
  const symbols = h('aside', { class: 'symbols', id: 'symbols', hidden: true });
  main.append(
    h(
      'div',
      { class: 'browse' },
      treeView(tree.tree, repo, branch, path),
      h('section', { class: 'file-view' }, breadcrumbs(repo, branch, path, 'blob'), code),
      symbols,
    ),
  );
  if (source.encoding === 'utf-8') {
    markMatches(source.source);
    showLines();
    code.addEventListener('click', (event) => void showSymbol(event, symbols, repo, branch));
  }
}

export async function renderTree(main: HTMLElement, repo: string, branch: string, path: string): Promise<void> {
  const { tree } = await postJson<{ tree: TreeNode }>('/api/tree', { repoName: repo, revisionName: branch, paths: path ? [...ancestors(path), path] : [] });
  clear(main);
  const here = path ? findNode(tree, path) : tree;
  const listing = h(
    'ul',
    { class: 'listing', id: 'listing' },
    ...(here?.children ?? []).map((child) => h('li', { class: `node-${child.type}` }, nodeLink(child, repo, branch))),
  );
  main.append(
    h('div', { class: 'browse' }, treeView(tree, repo, branch, path), h('section', { class: 'file-view' }, breadcrumbs(repo, branch, path, 'tree'), listing)),
  );
}

/** Every directory on the way to `path` (its own directory included). */
function ancestors(path: string): string[] {
  const segments = path.split('/').slice(0, -1);
  return segments.map((_, i) => segments.slice(0, i + 1).join('/'));
}

function findNode(node: TreeNode, path: string): TreeNode | undefined {
  if (node.path === path) return node;
  for (const child of node.children) {
    if (path === child.path || path.startsWith(`${child.path}/`)) return findNode(child, path);
  }
  return undefined;
}

function nodeLink(node: TreeNode, repo: string, branch: string): HTMLElement {
  if (node.type === 'commit') return h('span', { class: 'submodule' }, `${node.name} (submodule)`);
  return h(
    'a',
    { href: node.type === 'tree' ? treeUrl(repo, branch, node.path) : blobUrl(repo, branch, node.path) },
    node.type === 'tree' ? `${node.name}/` : node.name,
  );
}

function treeView(root: TreeNode, repo: string, branch: string, current: string): HTMLElement {
  const list = (node: TreeNode): HTMLElement =>
    h(
      'ul',
      {},
      ...node.children.map((child) =>
        h(
          'li',
          { class: child.path === current ? `node-${child.type} current` : `node-${child.type}` },
          nodeLink(child, repo, branch),
          child.children.length > 0 ? list(child) : null,
        ),
      ),
    );
  return h('nav', { class: 'tree', id: 'tree', 'aria-label': 'Files' }, h('a', { class: 'tree-root', href: treeUrl(repo, branch, '') }, repo), list(root));
}

/**
 * A select of the repository's indexed branches that opens `path` on the one chosen (`kind` a file or a directory);
 * filled once GET /api/repos answers.
 */
function branchSelector(repo: string, branch: string, path: string, kind: 'blob' | 'tree'): HTMLSelectElement {
  const select = h('select', { id: 'branch', 'aria-label': 'Branch' }, h('option', { value: branch }, branch === 'HEAD' ? 'default branch' : branch));
  void getJson<RepositoryListing[]>('/api/repos', { query: repo, perPage: '100' }).then((listed) => {
    const found = listed.find((candidate) => candidate.repoName === repo);
    if (!found) return;
    // The index names the default branch HEAD: it is shown, and opened, by its name.
    const names = [...new Set(found.branches.map((name) => (name === 'HEAD' ? found.defaultBranch : name)))];
    const current = branch === 'HEAD' ? found.defaultBranch : branch;
    if (!names.includes(current)) names.unshift(current);
    select.replaceChildren(...names.map((name) => h('option', { value: name, selected: name === current }, name)));
  });
  select.addEventListener('change', () => {
    const chosen = select.value;
    // Through a link, so that the app's router opens it without a reload.
    h('a', { href: kind === 'blob' ? blobUrl(repo, chosen, path) : treeUrl(repo, chosen, path) }).click();
  });
  return select;
}

function breadcrumbs(repo: string, branch: string, path: string, kind: 'blob' | 'tree'): HTMLElement {
  const parts: (string | HTMLElement)[] = [h('a', { href: treeUrl(repo, branch, '') }, repo), ' @ ', branchSelector(repo, branch, path, kind)];
  const segments = path ? path.split('/') : [];
  segments.forEach((segment, i) => {
    const prefix = segments.slice(0, i + 1).join('/');
    parts.push(' / ', i === segments.length - 1 ? h('strong', {}, segment) : h('a', { href: treeUrl(repo, branch, prefix) }, segment));
  });
  parts.push(
    ' ',
    copyButton('Copy path', () => path || repo, 'copy-path'),
    ' ',
    copyButton('Copy link', () => location.href, 'copy-link'),
  );
  return h('p', { class: 'crumbs', id: 'crumbs' }, ...parts);
}

function codeView(source: Source): HTMLElement {
  const container = h('div', { class: 'code-view', id: 'code' });
  highlightLines(source.source, source.language).forEach((html, i) => {
    const number = i + 1;
    const code = h('span', { class: 'code' });
    code.innerHTML = html; // highlight.js output: the source's text escaped, its own spans only
    container.append(
      h('div', { class: 'line', id: `L${number}` }, h('a', { class: 'ln', href: `#L${number}`, 'data-line': String(number) }, String(number)), code),
    );
  });
  container.addEventListener('click', (event) => {
    const link = (event.target as Element).closest('a.ln');
    if (!link || !(event as MouseEvent).shiftKey) return;
    // Shift-click extends the selection: #L10-L20.
    event.preventDefault();
    const first = /^#L(\d+)/.exec(location.hash)?.[1];
    const line = link.getAttribute('data-line')!;
    location.hash = first ? `#L${Math.min(+first, +line)}-L${Math.max(+first, +line)}` : `#L${line}`;
  });
  return container;
}

/** Marks the lines of the #L anchor and scrolls to the first. */
export function showLines(): void {
  for (const line of document.querySelectorAll('.line.selected')) line.classList.remove('selected');
  const found = /^#L(\d+)(?:-L(\d+))?$/.exec(location.hash);
  if (!found) return;
  const first = Number(found[1]);
  const last = Number(found[2] ?? found[1]);
  for (let line = first; line <= last; line++) document.getElementById(`L${line}`)?.classList.add('selected');
  document.getElementById(`L${first}`)?.scrollIntoView({ block: 'center' });
}

/**
 * Highlights `?hl=` byte ranges with the CSS Custom Highlight API, over the
 * syntax-highlighted text nodes (no DOM changes).
 */
function markMatches(source: string): void {
  const spec = new URLSearchParams(location.search).get('hl');
  if (!spec || typeof Highlight === 'undefined') return;
  const bytes = new TextEncoder().encode(source);
  const toIndex = (byteOffset: number) => new TextDecoder().decode(bytes.subarray(0, byteOffset)).length;
  const ranges: Range[] = [];
  for (const part of spec.split(',')) {
    const [start, end] = part.split('-').map(Number);
    if (!Number.isInteger(start) || !Number.isInteger(end)) continue;
    const range = domRange(toIndex(start!), toIndex(end!), source);
    if (range) ranges.push(range);
  }
  CSS.highlights.set('search-match', new Highlight(...ranges));
}

/** A DOM Range over the code view for string offsets [from, to) of the source (same line). */
function domRange(from: number, to: number, source: string): Range | null {
  const lineStart = source.lastIndexOf('\n', from - 1) + 1;
  const lineNumber = source.slice(0, from).split('\n').length;
  const code = document.querySelector(`#L${lineNumber} .code`);
  if (!code) return null;
  const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  let offset = 0;
  let started = false;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const length = node.textContent!.length;
    if (!started && from - lineStart < offset + length) {
      range.setStart(node, from - lineStart - offset);
      started = true;
    }
    if (started && to - lineStart <= offset + length) {
      range.setEnd(node, to - lineStart - offset);
      return range;
    }
    offset += length;
  }
  return null;
}

/** On a click inside an identifier: its definitions and references, in the side panel. */
async function showSymbol(event: MouseEvent, panel: HTMLElement, repo: string, branch: string): Promise<void> {
  if ((event.target as Element).closest('a')) return;
  const word = identifierAt(event);
  if (!word) return;
  const request = { symbolName: word, repoName: repo, revisionName: branch };
  const [definitions, references] = await Promise.all([
    postJson<SymbolMatches>('/api/find_definitions', request),
    postJson<SymbolMatches>('/api/find_references', request),
  ]);
  const section = (title: string, found: SymbolMatches) =>
    h(
      'section',
      {},
      h('h3', {}, `${title} (${found.stats.matchCount})`),
      h(
        'ul',
        {},
        ...found.files.flatMap((file) =>
          file.matches.map((match) =>
            h(
              'li',
              {},
              h('a', { href: `${localPath(file.webUrl)}#L${match.range.start.lineNumber}` }, `${file.fileName}:${match.range.start.lineNumber}`),
              h('code', {}, match.lineContent.trim()),
            ),
          ),
        ),
      ),
    );
  panel.replaceChildren(h('h2', {}, word), section('Definitions', definitions), section('References', references));
  panel.hidden = false;
}

function identifierAt(event: MouseEvent): string | null {
  const position = document.caretRangeFromPoint?.(event.clientX, event.clientY);
  const text = position?.startContainer.textContent;
  if (!position || !text) return null;
  let start = position.startOffset;
  let end = position.startOffset;
  while (start > 0 && /\w/.test(text[start - 1]!)) start--;
  while (end < text.length && /\w/.test(text[end]!)) end++;
  const word = text.slice(start, end);
  return /^[A-Za-z_]\w*$/.test(word) ? word : null;
}
