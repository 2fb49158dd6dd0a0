// The page shell's behaviour, loaded on every page (a few hundred bytes, no framework): theme toggle persisted
// under localStorage "theme", the mobile menu toggle (Escape closes it), the logged-in header state from
// GET /api/auth/me (anything but a user means logged out), Logout, and F8 focusing the notifications.
const root = document.documentElement;

for (const button of document.querySelectorAll<HTMLButtonElement>('[data-theme-toggle]')) {
  button.addEventListener('click', () => {
    const dark = !root.classList.contains('dark');
    root.classList.toggle('dark', dark);
    try {
      localStorage.setItem('theme', dark ? 'dark' : 'light');
    } catch {
      // Storage refused (private mode): the choice lasts for this page only.
    }
  });
}

const menu = document.getElementById('mobile-menu');
const menuToggle = document.querySelector<HTMLButtonElement>('[data-menu-toggle]');
function setMenu(open: boolean): void {
  if (!menuToggle) return;
  menuToggle.setAttribute('aria-expanded', String(open));
  menuToggle.setAttribute('aria-label', open ? 'Close menu' : 'Open menu');
  if (menu) menu.hidden = !open;
}
menuToggle?.addEventListener('click', () => setMenu(menuToggle.getAttribute('aria-expanded') !== 'true'));

document.addEventListener('keydown', (e) => {
  if (e.key === 'F8') {
    e.preventDefault();
    document.getElementById('toaster')?.focus();
  } else if (e.key === 'Escape' && menu && !menu.hidden) {
    setMenu(false);
    menuToggle?.focus();
  }
});

function showAuth(loggedIn: boolean): void {
  for (const el of document.querySelectorAll<HTMLElement>('[data-auth]')) {
    const show = (el.dataset.auth === 'in') === loggedIn;
    el.hidden = !show;
    if (el.closest('header > div')) el.classList.toggle('sm:flex', show);
  }
}

fetch('/api/auth/me', { credentials: 'include', headers: { accept: 'application/json' } })
  .then(async (res) => {
    if (!res.ok) return showAuth(false);
    const user = (await res.json()) as { username?: unknown } | null;
    showAuth(!!user && typeof user.username === 'string');
  })
  .catch(() => showAuth(false));

for (const button of document.querySelectorAll<HTMLButtonElement>('[data-logout]')) {
  button.addEventListener('click', async () => {
    try {
      await fetch('/api/auth/logout', { method: 'POST', credentials: 'include' });
    } catch (err) {
      console.error('logout failed', err);
    }
    location.href = '/';
  });
}
