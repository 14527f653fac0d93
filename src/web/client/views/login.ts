import { Api, ApiError, type Credentials } from '../api.ts';
import { h } from '../dom.ts';
import { icon } from '../icons.ts';

/** The sign-in card: email and password, traded for an API key by POST /fetch_api_key. */
export function loginView(realmName: string, signedIn: (credentials: Credentials) => void): HTMLElement {
  const email = h('input', { id: 'login-email', type: 'email', name: 'username', autocomplete: 'username', required: true, 'aria-label': 'Email' });
  const password = h('input', { id: 'login-password', type: 'password', name: 'password', autocomplete: 'current-password', required: true, 'aria-label': 'Password' });
  const error = h('p', { class: 'form-error', role: 'alert', 'aria-live': 'assertive' });
  const submit = h('button', { type: 'submit', class: 'primary', 'aria-label': 'Sign in' }, 'Sign in');

  const onSubmit = async (event: Event) => {
    event.preventDefault();
    error.textContent = '';
    submit.disabled = true;
    submit.textContent = 'Signing in…';
    try {
      const answer = await new Api(null).post('/fetch_api_key', { username: email.value.trim(), password: password.value });
      signedIn({ email: answer.email, apiKey: answer.api_key });
    } catch (failure) {
      error.textContent = failure instanceof ApiError ? failure.message : 'Sign-in failed';
      password.select();
    } finally {
      submit.disabled = false;
      submit.textContent = 'Sign in';
    }
  };

  const form = h('form', { class: 'login-card', 'aria-labelledby': 'login-title', onsubmit: onSubmit },
    h('div', { class: 'login-logo', 'aria-hidden': 'true' }, icon('logo', 30)),
    h('h1', { id: 'login-title' }, realmName ? `Sign in to ${realmName}` : 'Sign in'),
    h('label', { for: 'login-email' }, 'Email'),
    email,
    h('label', { for: 'login-password' }, 'Password'),
    password,
    error,
    submit,
  );
  queueMicrotask(() => email.focus());
  return h('main', { class: 'login' }, form);
}
