/** A small element builder: text children are text nodes, never HTML. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | boolean | undefined> = {},
  ...children: (Node | string | null | undefined)[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    element.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children) if (child !== null && child !== undefined) element.append(child);
  return element;
}

export function clear(element: Element): void {
  element.replaceChildren();
}

/** A button that copies `text()` to the clipboard and says so ("Copied", or why it could not) for a moment. */
export function copyButton(label: string, text: () => string, id?: string): HTMLButtonElement {
  const button = h('button', { type: 'button', class: 'copy', id }, label);
  button.addEventListener('click', () => {
    navigator.clipboard.writeText(text()).then(
      () => say('Copied'),
      () => say('Copy failed: select and copy by hand'),
    );
  });
  const say = (message: string) => {
    button.textContent = message;
    setTimeout(() => (button.textContent = label), 1500);
  };
  return button;
}
