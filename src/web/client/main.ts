import './style.css';
import { Api, loadCredentials, saveCredentials, type Credentials } from './api.ts';
import { ChatApp } from './app.ts';
import { h } from './dom.ts';
import { loginView } from './views/login.ts';

const root = document.getElementById('root')!;

function signedIn(credentials: Credentials): void {
  saveCredentials(credentials);
  new ChatApp(root, credentials, signedOut).start();
}

function signedOut(reason: string): void {
  saveCredentials(null);
  void showLogin(reason);
}

async function showLogin(notice = ''): Promise<void> {
  document.documentElement.dataset.theme = 'auto';
  document.title = 'Sign in · Chat';
  let realmName = '';
  try {
    realmName = (await new Api(null).get('/server_settings')).realm_name ?? '';
  } catch {
    // the form works without the organization's name
  }
  const view = loginView(realmName, signedIn);
  if (notice) view.querySelector('form')?.prepend(h('p', { class: 'notice', role: 'status' }, notice));
  root.replaceChildren(view);
}

const credentials = loadCredentials();
if (credentials) new ChatApp(root, credentials, signedOut).start();
else void showLogin();
