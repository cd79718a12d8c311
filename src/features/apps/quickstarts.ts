import type { AppType } from './schema'

/** Where the client secret goes in a quickstart when it is not being revealed this once. */
export const SECRET_PLACEHOLDER = '<your client secret>'

/** One file of a quickstart, as the page shows it (and tests/apps-quickstart.test.ts runs it). */
export interface QuickstartFile {
  name: string
  language: 'js' | 'ts' | 'tsx' | 'env'
  code: string
}

export interface Quickstart {
  id: 'express' | 'nextjs' | 'spa' | 'native' | 'env'
  title: string
  /** What to install and where the pieces go, in one or two sentences. */
  intro: string
  files: QuickstartFile[]
}

/** What the quickstarts of an app are filled in with. */
export interface QuickstartApp {
  issuer: string
  clientId: string
  appType: AppType
  redirectUris: string[]
  postLogoutRedirectUris: string[]
  /** The secret, only inside its one-time reveal; elsewhere SECRET_PLACEHOLDER stands for it. */
  clientSecret?: string | null
}

const literal = (value: string) => JSON.stringify(value)

/** The callback a snippet uses: the app's first redirect URI, or an example of the kind it needs. */
const firstRedirect = (app: QuickstartApp, fallback: string) => app.redirectUris[0] ?? fallback

/** A native app's loopback callback (RFC 8252 §7.3): its path, on whatever port the CLI gets. */
function loopbackPath(app: QuickstartApp): string {
  for (const uri of app.redirectUris) {
    const url = URL.parse(uri)
    if (url?.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname))
      return url.pathname
  }
  return '/callback'
}

/** The environment every server-side snippet reads; the secret only ever comes from here. */
function envBlock(app: QuickstartApp): QuickstartFile {
  const lines = [
    `OIDC_ISSUER=${app.issuer}`,
    `OIDC_CLIENT_ID=${app.clientId}`,
    ...(app.appType === 'web' ? [`OIDC_CLIENT_SECRET=${app.clientSecret ?? SECRET_PLACEHOLDER}`] : []),
    `OIDC_REDIRECT_URI=${firstRedirect(app, 'https://app.example.com/callback')}`,
    ...(app.postLogoutRedirectUris[0]
      ? [`OIDC_POST_LOGOUT_REDIRECT_URI=${app.postLogoutRedirectUris[0]}`]
      : []),
  ]
  return { name: '.env', language: 'env', code: `${lines.join('\n')}\n` }
}

/** openid-client v6 for a server-side web app: the OIDC part, which the Express routes call. */
function expressAuth(app: QuickstartApp): string {
  const redirect = firstRedirect(app, 'https://app.example.com/callback')
  return `// auth.mjs: the OpenID Connect part of the app (openid-client v6).
import * as client from "openid-client";

const issuer = new URL(process.env.OIDC_ISSUER ?? ${literal(app.issuer)});
const clientId = process.env.OIDC_CLIENT_ID ?? ${literal(app.clientId)};
export const redirectUri = process.env.OIDC_REDIRECT_URI ?? ${literal(redirect)};

// The client secret goes in the Authorization header (client_secret_basic).
const config = await client.discovery(
  issuer,
  clientId,
  undefined,
  client.ClientSecretBasic(process.env.OIDC_CLIENT_SECRET),
  // Plain http is allowed only for an instance on your own machine (development).
  { execute: issuer.protocol === "http:" ? [client.allowInsecureRequests] : [] },
);

/** Where to send the browser to sign in, and what to keep in its session until it comes back. */
export async function startSignIn() {
  const codeVerifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: "openid email profile",
    code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: "S256",
    state,
  });
  return { url: url.href, pending: { codeVerifier, state } };
}

/** The redirect back: the code is exchanged for tokens; the ID token's claims say who signed in. */
export async function finishSignIn(callbackUrl, pending) {
  const tokens = await client.authorizationCodeGrant(config, new URL(callbackUrl), {
    pkceCodeVerifier: pending.codeVerifier,
    expectedState: pending.state,
  });
  return { user: tokens.claims(), idToken: tokens.id_token };
}

/** Signs the user out at the identity provider too. */
export function signOutUrl(idToken) {
  return client.buildEndSessionUrl(config, { id_token_hint: idToken }).href;
}
`
}

function expressServer(): string {
  return `// server.mjs: npm install express express-session openid-client
import express from "express";
import session from "express-session";
import { finishSignIn, redirectUri, signOutUrl, startSignIn } from "./auth.mjs";

const app = express();
app.use(session({ secret: process.env.SESSION_SECRET, resave: false, saveUninitialized: false }));

app.get("/login", async (req, res) => {
  const { url, pending } = await startSignIn();
  req.session.pending = pending;
  res.redirect(url);
});

app.get(new URL(redirectUri).pathname, async (req, res) => {
  const { user, idToken } = await finishSignIn(new URL(req.originalUrl, redirectUri), req.session.pending);
  delete req.session.pending;
  req.session.user = user;
  req.session.idToken = idToken;
  res.redirect("/");
});

app.get("/logout", (req, res) => {
  const idToken = req.session.idToken;
  req.session.destroy(() => res.redirect(signOutUrl(idToken)));
});

app.get("/", (req, res) => {
  res.send(req.session.user ? \`Hello \${req.session.user.email}\` : '<a href="/login">Sign in</a>');
});

app.listen(Number(process.env.PORT ?? 3000));
`
}

function nextAuth(app: QuickstartApp): QuickstartFile[] {
  return [
    {
      name: 'auth.ts',
      language: 'ts',
      code: `// auth.ts — npm install next-auth@beta
import NextAuth from "next-auth";

export const { handlers, auth, signIn, signOut } = NextAuth({
  providers: [
    {
      id: "gatehouse",
      name: "Gatehouse",
      type: "oidc",
      issuer: process.env.OIDC_ISSUER ?? ${literal(app.issuer)},
      clientId: process.env.OIDC_CLIENT_ID ?? ${literal(app.clientId)},
      clientSecret: process.env.OIDC_CLIENT_SECRET,
      client: { token_endpoint_auth_method: "client_secret_basic" },
      checks: ["pkce", "state"],
    },
  ],
});
`,
    },
    {
      name: 'app/api/auth/[...nextauth]/route.ts',
      language: 'ts',
      code: `import { handlers } from "@/auth";

export const { GET, POST } = handlers;
`,
    },
    {
      name: 'app/page.tsx',
      language: 'tsx',
      code: `import { auth, signIn, signOut } from "@/auth";

export default async function Home() {
  const session = await auth();
  if (!session?.user) {
    return (
      <form action={async () => { "use server"; await signIn("gatehouse"); }}>
        <button type="submit">Sign in</button>
      </form>
    );
  }
  return (
    <form action={async () => { "use server"; await signOut(); }}>
      <p>Hello {session.user.email}</p>
      <button type="submit">Sign out</button>
    </form>
  );
}
`,
    },
  ]
}

function spa(app: QuickstartApp): string {
  const redirect = firstRedirect(app, 'https://app.example.com/callback')
  const logout = app.postLogoutRedirectUris[0]
  return `// auth.ts — npm install oidc-client-ts (authorization code with PKCE; no secret in the browser)
import { UserManager } from "oidc-client-ts";

export const userManager = new UserManager({
  authority: ${literal(app.issuer)},
  client_id: ${literal(app.clientId)},
  redirect_uri: ${literal(redirect)},${logout ? `\n  post_logout_redirect_uri: ${literal(logout)},` : ''}
  response_type: "code",
  scope: "openid email profile",
});

/** On the page at the redirect URI: finishes the sign-in the button started. */
export async function handleRedirect() {
  if (new URLSearchParams(window.location.search).has("code")) {
    const user = await userManager.signinRedirectCallback();
    window.history.replaceState({}, "", "/");
    return user;
  }
  return userManager.getUser();
}

export const signIn = () => userManager.signinRedirect();
export const signOut = () => userManager.signoutRedirect();
`
}

function native(app: QuickstartApp): string {
  const path = loopbackPath(app)
  return `// cli.mjs: npm install openid-client, then: node cli.mjs
// Authorization code with PKCE and a loopback redirect (RFC 8252): no secret; the port is any free one.
import { createServer } from "node:http";
import * as client from "openid-client";

const issuer = new URL(process.env.OIDC_ISSUER ?? ${literal(app.issuer)});
const clientId = process.env.OIDC_CLIENT_ID ?? ${literal(app.clientId)};
const config = await client.discovery(issuer, clientId, undefined, client.None(), {
  execute: issuer.protocol === "http:" ? [client.allowInsecureRequests] : [],
});

const server = createServer();
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const redirectUri = \`http://127.0.0.1:\${server.address().port}${path}\`;

const codeVerifier = client.randomPKCECodeVerifier();
const state = client.randomState();
const url = client.buildAuthorizationUrl(config, {
  redirect_uri: redirectUri,
  scope: "openid email profile offline_access",
  prompt: "consent",
  code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
  code_challenge_method: "S256",
  state,
});
console.log(\`Open this address in your browser to sign in:\\n\${url.href}\`);

const callbackUrl = await new Promise((resolve) => {
  server.on("request", (req, res) => {
    const current = new URL(req.url, redirectUri);
    if (current.pathname !== ${literal(path)}) return res.writeHead(404).end();
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("Signed in. You can close this tab and go back to the terminal.");
    resolve(current);
  });
});
server.close();
server.closeAllConnections();

const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
  pkceCodeVerifier: codeVerifier,
  expectedState: state,
});
console.log(\`Signed in as \${tokens.claims()?.email ?? tokens.claims()?.sub}\`);
`
}

/**
 * The quickstarts of an app, for its type: server-side web apps (Express with openid-client,
 * Next.js with Auth.js), a single-page app (oidc-client-ts) or a native app or CLI (PKCE, loopback
 * redirect), and the `.env` block they read. The issuer and client id are filled in; the secret
 * only when it is being revealed, else SECRET_PLACEHOLDER.
 */
export function quickstartsFor(app: QuickstartApp): Quickstart[] {
  const env: Quickstart = {
    id: 'env',
    title: '.env',
    intro: 'The settings the snippets read. Keep the client secret out of source control.',
    files: [envBlock(app)],
  }
  if (app.appType === 'spa')
    return [
      {
        id: 'spa',
        title: 'Single-page app (oidc-client-ts)',
        intro: 'Call signIn() from a button and handleRedirect() when the app loads.',
        files: [{ name: 'auth.ts', language: 'ts', code: spa(app) }],
      },
      env,
    ]
  if (app.appType === 'native')
    return [
      {
        id: 'native',
        title: 'Native app or CLI (PKCE, loopback redirect)',
        intro: `Register http://127.0.0.1${loopbackPath(app)} as a redirect URI: any port of it is accepted.`,
        files: [{ name: 'cli.mjs', language: 'js', code: native(app) }],
      },
      env,
    ]
  return [
    {
      id: 'express',
      title: 'Express (openid-client)',
      intro:
        'auth.mjs holds the OpenID Connect part; server.mjs gives it routes. Put the .env values in the environment.',
      files: [
        { name: 'auth.mjs', language: 'js', code: expressAuth(app) },
        { name: 'server.mjs', language: 'js', code: expressServer() },
      ],
    },
    {
      id: 'nextjs',
      title: 'Next.js (Auth.js)',
      intro:
        'Register https://<your site>/api/auth/callback/gatehouse as a redirect URI, and set AUTH_SECRET (npx auth secret).',
      files: nextAuth(app),
    },
    env,
  ]
}
