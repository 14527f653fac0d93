import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../passwords.ts';

/**
 * The account-creation page an invitation's link opens: plain server-rendered HTML with a form that posts
 * back to the same URL, so it works in any browser, without the web client's script.
 */

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escape = (text: string) => text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);

const STYLE = `
  body { font: 16px/1.5 system-ui, sans-serif; margin: 0; min-height: 100vh; display: grid; place-items: center; background: #f4f5f7; color: #1d2129; }
  main { background: #fff; padding: 2rem 2.5rem; border-radius: 10px; box-shadow: 0 2px 12px #0002; width: min(26rem, 90vw); }
  h1 { font-size: 1.4rem; margin: 0 0 1rem; }
  label { display: block; margin: 0.9rem 0 0.2rem; font-weight: 600; }
  input { box-sizing: border-box; width: 100%; padding: 0.5rem; font: inherit; border: 1px solid #b8bcc4; border-radius: 6px; }
  button { margin-top: 1.4rem; width: 100%; padding: 0.6rem; font: inherit; font-weight: 600; color: #fff; background: #2b6cb0; border: 0; border-radius: 6px; cursor: pointer; }
  .error { background: #fdecea; color: #8a1c12; padding: 0.6rem 0.8rem; border-radius: 6px; }
  .hint { color: #5f6673; font-size: 0.9rem; }
  @media (prefers-color-scheme: dark) { body { background: #1b1d22; color: #e6e8eb; } main { background: #262930; } input { background: #1b1d22; color: inherit; border-color: #4a4f59; } }
`;

function page(title: string, content: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escape(title)}</title>
<style>${STYLE}</style>
</head>
<body><main>${content}</main></body>
</html>
`;
}

export interface JoinForm {
  realmName: string;
  /** the invited address, fixed; null for a reusable link, whose visitor types one */
  invitedEmail: string | null;
  /** what the visitor typed, shown again after an error */
  values: { fullName: string; email: string };
  error?: string;
}

export function joinFormPage(form: JoinForm): string {
  const emailField = form.invitedEmail
    ? `<label for="email">Email</label><input id="email" value="${escape(form.invitedEmail)}" disabled>`
    : `<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="email" required value="${escape(form.values.email)}">`;
  return page(`Join ${form.realmName}`, `
<h1>Join ${escape(form.realmName)}</h1>
<p class="hint">You were invited to this organization. Choose the name others will see and a password to log in with.</p>
${form.error ? `<p class="error" role="alert">${escape(form.error)}</p>` : ''}
<form method="post">
${emailField}
<label for="full_name">Full name</label>
<input id="full_name" name="full_name" autocomplete="name" required maxlength="100" value="${escape(form.values.fullName)}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="new-password" required minlength="${PASSWORD_MIN_LENGTH}" maxlength="${PASSWORD_MAX_LENGTH}">
<button type="submit">Create my account</button>
</form>`);
}

export function joinDonePage(realmName: string, realmUrl: string, email: string): string {
  return page(`Welcome to ${realmName}`, `
<h1>Welcome to ${escape(realmName)}</h1>
<p>Your account <strong>${escape(email)}</strong> is ready.</p>
<p><a href="${escape(realmUrl)}/">Log in</a> with your email and the password you chose.</p>`);
}

/** A link that cannot make an account (unknown, used, revoked, expired): says why. */
export function joinErrorPage(message: string): string {
  return page('Invitation link', `<h1>This link cannot be used</h1><p class="error" role="alert">${escape(message)}</p>`);
}
