/**
 * The inspector's page: a shell with no data (it is served without an API key); the client fills `#view`.
 * `keyRequired` tells the client to ask for a key before its first request rather than after a 401.
 */
export function InspectorPage({ keyRequired }: { keyRequired: boolean }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>mnemo inspector</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href="/inspect/inspector.css" />
        <script type="module" src="/inspect/inspector.js"></script>
      </head>
      <body data-key-required={keyRequired ? 'true' : 'false'}>
        <header class="top">
          <a class="brand" href="#/conversations">
            mnemo <span>inspector</span>
          </a>
          <nav aria-label="Views">
            <a data-section="conversations" href="#/conversations">
              Conversations
            </a>
            <a data-section="background" href="#/background">
              Background
            </a>
          </nav>
          <button id="forget-key" type="button" class="quiet" hidden>
            Forget key
          </button>
        </header>
        <section id="key-panel" class="panel" hidden>
          <h2>API key</h2>
          <p id="key-message"></p>
          <form id="key-form">
            <label>
              Key of your tenant
              <input id="key-input" name="key" type="password" autocomplete="off" required />
            </label>
            <button type="submit">Open</button>
          </form>
          <p class="hint">The key stays in this tab (session storage) and is sent only as the Authorization header.</p>
        </section>
        <main id="view">
          <noscript>
            <p class="state state-error">
              The inspector needs JavaScript: it sends your API key as a header, which a plain link cannot.
            </p>
          </noscript>
        </main>
      </body>
    </html>
  );
}
