import type { Api, Json } from '../api.ts';
import { avatar, h } from '../dom.ts';
import type { Model } from '../model.ts';
import { showDialog } from './dialog.ts';

// Loaded on demand (app.ts imports it dynamically): the page's main bundle does not carry it.

const THEMES: [number, string][] = [[1, 'Automatic (as the system)'], [2, 'Dark'], [3, 'Light']];

/** The personal settings shown as checkboxes, by section: the server's names and the words a person reads. */
const TOGGLES: Record<string, [string, string][]> = {
  Display: [['twenty_four_hour_time', 'Twenty-four-hour time (14:05, not 2:05 PM)']],
  Composing: [['enter_sends', 'Enter sends the message (Ctrl+Enter adds a line)']],
  Notifications: [
    ['enable_desktop_notifications', 'Desktop notifications for direct messages and mentions'],
    ['pm_content_in_desktop_notifications', 'Show the text of direct messages in notifications'],
    ['enable_stream_desktop_notifications', 'Desktop notifications for every channel message'],
    ['enable_sounds', 'Sounds with notifications'],
  ],
};

/**
 * The settings page: profile (name, avatar) and the personal settings the server supports. Each change is
 * saved as it is made (PATCH /settings, POST /users/me/avatar); the server's events update the page's model.
 */
export async function showSettings(api: Api, model: Model): Promise<void> {
  const settings = model.userSettings;
  const status = h('p', { class: 'settings-status', role: 'status' });
  const save = async (params: Record<string, unknown>, what: string) => {
    status.textContent = 'Saving…';
    try {
      await api.patch('/settings', params);
      status.textContent = `Saved: ${what}.`;
    } catch (error) {
      status.textContent = `Not saved: ${(error as Error).message}`;
    }
  };

  const picture = h('span', {}, avatar(model.me.userId, model.me.fullName));
  const avatarInput = h('input', { type: 'file', accept: 'image/png,image/jpeg,image/gif,image/webp', hidden: true });
  avatarInput.addEventListener('change', () => void (async () => {
    const file = avatarInput.files?.[0];
    if (!file) return;
    status.textContent = 'Uploading the avatar…';
    try {
      const form = new FormData();
      form.append('file', file, file.name);
      const answer: Json = await api.postForm('/users/me/avatar', form);
      picture.replaceChildren(h('img', { class: 'avatar avatar-large avatar-image', src: answer.avatar_url, alt: 'Your avatar' }));
      status.textContent = 'Saved: your avatar.';
    } catch (error) {
      status.textContent = `Not saved: ${(error as Error).message}`;
    }
    avatarInput.value = '';
  })());
  const name = h('input', { type: 'text', value: model.me.fullName, required: true, maxlength: 60, autocomplete: 'name' });
  name.addEventListener('change', () => {
    const value = name.value.trim();
    if (value && value !== model.me.fullName) void save({ full_name: value }, 'your name');
  });

  const select = (setting: string, label: string, options: [string | number, string][]) => {
    const element = h('select', {}, options.map(([value, text]) => h('option', { value, selected: String(settings[setting]) === String(value) }, text)));
    element.addEventListener('change', () => {
      const chosen = options.find(([value]) => String(value) === element.value);
      if (chosen) void save({ [setting]: chosen[0] }, label.toLowerCase());
    });
    return h('label', { class: 'dialog-field' }, label, element);
  };
  const toggle = ([setting, label]: [string, string]) => {
    const box = h('input', { type: 'checkbox', checked: settings[setting] === true });
    box.addEventListener('change', () => void save({ [setting]: box.checked }, label.toLowerCase()));
    return h('label', { class: 'settings-check' }, box, label);
  };
  const zones = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  const zone = String(settings.timezone ?? '');
  const zoneChoices: [string, string][] = [['', 'Not set'], ...(zone && !zones.includes(zone) ? [zone] : []).concat(zones).map((z): [string, string] => [z, z])];
  const emojisets = ((settings.emojiset_choices ?? []) as { key: string; text: string }[]).map((set): [string, string] => [set.key, set.text]);

  await showDialog('Settings', [
    h('fieldset', { class: 'settings-section' }, h('legend', {}, 'Profile'),
      h('div', { class: 'settings-profile' }, picture,
        h('button', { type: 'button', class: 'ghost small', onclick: () => avatarInput.click() }, 'Upload a new avatar'), avatarInput),
      h('label', { class: 'dialog-field' }, 'Display name', name)),
    h('fieldset', { class: 'settings-section' }, h('legend', {}, 'Display'),
      select('color_scheme', 'Theme', THEMES),
      emojisets.length ? select('emojiset', 'Emoji set', emojisets) : null,
      select('timezone', 'Time zone', zoneChoices),
      TOGGLES.Display!.map(toggle)),
    h('fieldset', { class: 'settings-section' }, h('legend', {}, 'Composing'), TOGGLES.Composing!.map(toggle)),
    h('fieldset', { class: 'settings-section' }, h('legend', {}, 'Notifications'), TOGGLES.Notifications!.map(toggle)),
    status,
  ]);
}
