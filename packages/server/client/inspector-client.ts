// The inspector's only script: it turns the location hash into a fragment request, sends the API key
// (kept in sessionStorage, never in a URL) as the Authorization header, and swaps the server-rendered
// HTML into the page. Its few writes (retire or correct a fact, erase a message or a user) ask the person
// first and then call the REST API like any client, same-origin and with the same key, so the API's key,
// origin and tenant rules decide; a cookie is never involved, so another site cannot forge one.

const keyStorageName = 'mnemo.inspect.apiKey';
const defaultRoute = '/conversations';

const view = document.getElementById('view') as HTMLElement;
const keyDialog = document.getElementById('key-panel') as HTMLElement;
const keyForm = document.getElementById('key-form') as HTMLFormElement;
const keyInput = document.getElementById('key-input') as HTMLInputElement;
const keyMessage = document.getElementById('key-message') as HTMLElement;
const forgetButton = document.getElementById('forget-key') as HTMLButtonElement;
let renderCount = 0;

function storedKey(): string | undefined {
  return sessionStorage.getItem(keyStorageName) ?? undefined;
}

function requestHeaders(): Headers {
  const headers = new Headers({ Accept: 'text/html', 'Content-Type': 'application/json' });
  const key = storedKey();
  if (key !== undefined) headers.set('Authorization', `Bearer ${key}`);
  return headers;
}

function currentRoute(): string {
  const route = location.hash.replace(/^#/, '');
  return route.startsWith('/') ? route : defaultRoute;
}

async function fetchFragment(
  route: string,
): Promise<{ ok: true; html: string } | { ok: false; status: number; message: string }> {
  let response: Response;
  try {
    response = await fetch(`/inspect/fragments${route}`, {
      headers: requestHeaders(),
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch (error) {
    return { ok: false, status: 0, message: `the server did not answer (${(error as Error).message})` };
  }
  if (response.ok) return { ok: true, html: await response.text() };
  let message = `${response.status} ${response.statusText}`;
  try {
    const body = (await response.json()) as { error?: { code?: string; message?: string } };
    if (body.error?.message !== undefined) message = `${body.error.code ?? 'error'}: ${body.error.message}`;
  } catch {
    // Not a JSON error body: the status line is all there is to show.
  }
  return { ok: false, status: response.status, message };
}

function showState(kind: 'loading' | 'error', text: string): void {
  const box = document.createElement('p');
  box.className = `state state-${kind}`;
  box.setAttribute('role', kind === 'error' ? 'alert' : 'status');
  box.textContent = text;
  view.replaceChildren(box);
}

function askForKey(message: string): void {
  keyDialog.hidden = false;
  keyMessage.textContent = message;
  view.replaceChildren();
  keyInput.focus();
}

async function render(): Promise<void> {
  const route = currentRoute();
  // Ask first when the server says it needs a key: a request bound to fail would only log a 401.
  if (document.body.dataset['keyRequired'] === 'true' && storedKey() === undefined) {
    askForKey('This server needs an API key.');
    return;
  }
  const ticket = ++renderCount;
  view.setAttribute('aria-busy', 'true');
  showState('loading', 'Loading…');
  markNavigation(route);
  const result = await fetchFragment(route);
  // A newer navigation started while this one waited: its answer wins.
  if (ticket !== renderCount) return;
  view.removeAttribute('aria-busy');
  if (!result.ok && result.status === 401) {
    askForKey(storedKey() === undefined ? 'This server needs an API key.' : 'The server did not accept this key.');
    return;
  }
  keyDialog.hidden = true;
  forgetButton.hidden = storedKey() === undefined;
  if (!result.ok) {
    showState('error', result.message);
    return;
  }
  view.innerHTML = result.html;
  view.querySelector('[data-focus]')?.scrollIntoView({ block: 'center' });
}

function markNavigation(route: string): void {
  const section = route.split(/[/?]/)[1] ?? '';
  for (const link of document.querySelectorAll<HTMLAnchorElement>('nav a[data-section]')) {
    if (link.dataset['section'] === section) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

// Forms of a view navigate: their fields become the query of their data-route.
view.addEventListener('submit', (event) => {
  const form = event.target as HTMLFormElement;
  if (form.dataset['route'] === undefined) return;
  event.preventDefault();
  const query = new URLSearchParams();
  for (const [name, value] of new FormData(form))
    if (typeof value === 'string' && value.trim() !== '') query.set(name, value.trim());
  const text = query.toString();
  location.hash = `${form.dataset['route']}${text === '' ? '' : `?${text}`}`;
});

// A <details data-fragment> loads its body (a summary's source messages) the first time it opens.
view.addEventListener(
  'toggle',
  (event) => {
    const details = event.target as HTMLDetailsElement;
    const route = details.dataset['fragment'];
    if (!details.open || route === undefined || details.dataset['loaded'] === 'true') return;
    const target = details.querySelector<HTMLElement>('[data-fragment-body]');
    if (target === null) return;
    details.dataset['loaded'] = 'true';
    target.textContent = 'Loading…';
    void fetchFragment(route).then((result) => {
      if (result.ok) target.innerHTML = result.html;
      else {
        details.dataset['loaded'] = 'false';
        target.textContent = result.message;
        target.className = 'state state-error';
      }
    });
  },
  true,
);

// A page link inside a loaded fragment (an expanded summary's earlier or later messages) replaces that fragment.
view.addEventListener('click', (event) => {
  const link = (event.target as HTMLElement).closest<HTMLElement>('[data-fragment-page]');
  const target = link?.closest<HTMLElement>('[data-fragment-body]');
  const route = link?.dataset['fragmentPage'];
  if (link == null || target == null || route === undefined) return;
  event.preventDefault();
  void fetchFragment(route).then((result) => {
    if (result.ok) target.innerHTML = result.html;
    else {
      target.textContent = result.message;
      target.className = 'state state-error';
    }
  });
});

/** A write a button asks for: what to confirm (or the value to ask for), and the API call. */
interface WriteAction {
  readonly method: 'DELETE' | 'PATCH';
  readonly path: string;
  readonly body?: unknown;
}

const encode = encodeURIComponent;

// Each returns the call once the person confirmed it (or gave a value), else undefined.
const writeActions: Record<string, (data: DOMStringMap) => WriteAction | undefined> = {
  'retire-fact': (data) =>
    confirm(`Retire the fact “${data['label']}”? It leaves every context and stays in the history.`)
      ? { method: 'DELETE', path: `/v1/facts/${encode(data['factId']!)}?user_id=${encode(data['user']!)}` }
      : undefined,
  'correct-fact': (data) => {
    const value = prompt(`Correct “${data['label']}” to (the old value stays in the history):`, data['value'] ?? '');
    return value === null || value.trim() === ''
      ? undefined
      : {
          method: 'PATCH',
          path: `/v1/facts/${encode(data['factId']!)}?user_id=${encode(data['user']!)}`,
          body: { value: value.trim() },
        };
  },
  'erase-message': (data) =>
    confirm(
      `Erase message ${data['seq']} of ${data['conversation']} and everything made of it (summaries are derived again)? This cannot be undone.`,
    )
      ? {
          method: 'DELETE',
          path: `/v1/conversations/${encode(data['conversation']!)}/messages/${encode(data['seq']!)}?user_id=${encode(data['user']!)}`,
        }
      : undefined,
  'erase-user': (data) =>
    confirm(
      `Erase everything of user ${data['user']}: conversations, messages, summaries, facts and memory files? This cannot be undone.`,
    )
      ? { method: 'DELETE', path: `/v1/users/${encode(data['user']!)}` }
      : undefined,
};

async function runWrite(action: WriteAction): Promise<string | undefined> {
  const headers = requestHeaders();
  headers.set('Accept', 'application/json');
  try {
    const response = await fetch(action.path, {
      method: action.method,
      headers,
      credentials: 'omit',
      ...(action.body === undefined ? {} : { body: JSON.stringify(action.body) }),
    });
    if (response.ok) return undefined;
    const body = (await response.json().catch(() => ({}))) as { error?: { code?: string; message?: string } };
    return body.error?.message === undefined
      ? `${response.status} ${response.statusText}`
      : `${body.error.code ?? 'error'}: ${body.error.message}`;
  } catch (error) {
    return `the server did not answer (${(error as Error).message})`;
  }
}

view.addEventListener('click', (event) => {
  const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-action]');
  const make = button === null ? undefined : writeActions[button.dataset['action'] ?? ''];
  if (button === null || make === undefined) return;
  const action = make(button.dataset);
  if (action === undefined) return;
  button.disabled = true;
  void runWrite(action).then((problem) => {
    if (problem === undefined) {
      // An erased user has nothing left to show: back to the list.
      if (button.dataset['action'] === 'erase-user') location.hash = defaultRoute;
      void render();
      return;
    }
    button.disabled = false;
    const notice = document.createElement('p');
    notice.className = 'state state-error notice';
    notice.setAttribute('role', 'alert');
    notice.dataset['writeError'] = 'true';
    notice.textContent = problem;
    view.prepend(notice);
  });
});

keyForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const key = keyInput.value.trim();
  if (key === '') return;
  sessionStorage.setItem(keyStorageName, key);
  keyInput.value = '';
  void render();
});

forgetButton.addEventListener('click', () => {
  sessionStorage.removeItem(keyStorageName);
  void render();
});

window.addEventListener('hashchange', () => void render());
void render();
