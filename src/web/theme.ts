/**
 * Light, dark or the system's theme: the choice is kept in this browser (localStorage) and set as the root
 * element's `data-theme`, which style.css reads; "system" leaves it to `prefers-color-scheme`.
 */
const KEY = 'trawl.theme';
const THEMES = ['system', 'light', 'dark'] as const;
type Theme = (typeof THEMES)[number];

function stored(): Theme {
  try {
    const value = localStorage.getItem(KEY);
    return THEMES.find((theme) => theme === value) ?? 'system';
  } catch {
    return 'system'; // storage refused (a sandboxed frame, a strict privacy mode)
  }
}

function apply(theme: Theme): void {
  if (theme === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
}

/** Applies the stored theme and makes `select` choose it. */
export function setUpTheme(select: HTMLSelectElement): void {
  const theme = stored();
  apply(theme);
  select.value = theme;
  select.addEventListener('change', () => {
    const chosen = THEMES.find((value) => value === select.value) ?? 'system';
    apply(chosen);
    try {
      if (chosen === 'system') localStorage.removeItem(KEY);
      else localStorage.setItem(KEY, chosen);
    } catch {
      // kept for this page only
    }
  });
}
