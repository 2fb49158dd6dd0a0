// Toast notifications: one visible toast at a time (a new one replaces the
// old), shown 5000 ms, dismissed by its close button or by swiping it right 50 px; F8 focuses the region
// (lib/shell.ts). Plain DOM so that static pages and every island share the one region in Base.astro; above
// an open modal dialog too.
export type ToastVariant = 'default' | 'destructive';
export interface ToastOptions {
  title: string;
  description?: string;
  variant?: ToastVariant;
}

export const TOAST_DURATION_MS = 5000;
export const SWIPE_DISMISS_PX = 50;

let timer: ReturnType<typeof setTimeout> | undefined;

/** A modal dialog makes the rest of the page inert under its backdrop: while one is open the region lives
 *  inside it, so its toasts can be read and dismissed, and it returns to the body when the dialog closes. */
function placeRegion(region: HTMLElement): void {
  const modal = Array.from(document.querySelectorAll<HTMLDialogElement>('dialog[open]'))
    .filter((d) => d.matches(':modal'))
    .at(-1);
  const home = modal ?? document.body;
  if (region.parentElement === home) return;
  home.append(region);
  modal?.addEventListener('close', () => document.body.append(region), { once: true });
}

export function toast({ title, description, variant = 'default' }: ToastOptions): void {
  const region = document.getElementById('toaster');
  const list = region?.querySelector<HTMLOListElement>('ol');
  if (!region || !list) return;
  placeRegion(region);
  clearTimeout(timer);
  list.replaceChildren();
  const item = document.createElement('li');
  item.className = 'toast';
  item.dataset.variant = variant;
  item.setAttribute('role', variant === 'destructive' ? 'alert' : 'status');
  const heading = document.createElement('div');
  heading.className = 'toast-title';
  heading.textContent = title;
  item.append(heading);
  if (description) {
    const body = document.createElement('div');
    body.className = 'toast-description';
    body.textContent = description;
    item.append(body);
  }
  const close = document.createElement('button');
  close.type = 'button';
  close.className = 'toast-close';
  close.setAttribute('aria-label', 'Close notification');
  close.textContent = '✕';
  close.addEventListener('click', () => dismiss(item));
  item.append(close);
  addSwipe(item);
  list.append(item);
  timer = setTimeout(() => dismiss(item), TOAST_DURATION_MS);
}

function dismiss(item: HTMLElement): void {
  item.remove();
}

function addSwipe(item: HTMLElement): void {
  let startX: number | null = null;
  item.addEventListener('pointerdown', (e) => {
    startX = e.clientX;
  });
  item.addEventListener('pointermove', (e) => {
    if (startX === null) return;
    const dx = Math.max(0, e.clientX - startX);
    item.style.transform = `translateX(${dx}px)`;
  });
  const end = (e: PointerEvent) => {
    if (startX === null) return;
    const dx = e.clientX - startX;
    startX = null;
    if (dx >= SWIPE_DISMISS_PX) dismiss(item);
    else item.style.transform = '';
  };
  item.addEventListener('pointerup', end);
  item.addEventListener('pointercancel', end);
}
