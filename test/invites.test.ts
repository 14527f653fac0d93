import { rmSync } from 'node:fs';
import t from 'tap';
import { configFrom } from '../src/config.ts';
import { keyOf, outbox } from './helpers/invitations.ts';
import { advanceClock, channel, drain, ofType } from './helpers/messages.ts';
import { startTestServer, tempDir, type ApiClient, type TestServer } from './helpers/server.ts';

const PASSWORD = 'a-Strong-passw0rd-for-joining';

async function page(link: string, form?: Record<string, string>) {
  const response = await fetch(link, form ? { method: 'POST', body: new URLSearchParams(form) } : {});
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const join_ = (api: ApiClient, key: string, params: Record<string, unknown>) => api.as(null).post(`/invites/join/${key}`, params);
const login = (api: ApiClient, username: string, password = PASSWORD) => api.as(null).post('/fetch_api_key', { username, password });
const groupId = async (api: ApiClient, name: string) =>
  (await api.get('/user_groups')).body.user_groups.find((group: { name: string }) => group.name === name).id as number;
const invites = async (api: ApiClient) => (await api.get('/invites')).body.invites as Record<string, unknown>[];
const error = (msg: string, code = 'BAD_REQUEST') => ({ result: 'error', msg, code });

t.test('email invitations: sent, listed, mailed, announced; the link makes the account', async (t) => {
  const server = await startTestServer(t);
  const { api, url } = server;
  const member = await api.createUser('member@example.com', 'Member');
  const admin = await api.createUser('admin@example.com', 'Admin');
  await api.patch(`/users/${admin.userId}`, { role: 200 });
  const general = await channel(api, 'general', [1]);
  const team = (await api.post('/user_groups/create', { name: 'team', description: '', members: [1] })).body.group_id as number;
  const adminQueue = (await api.as(admin).register({ event_types: ['invites_changed'] })).queueId;
  const memberQueue = (await api.as(member).register({ event_types: ['invites_changed'] })).queueId;
  const ownerQueue = (await api.register({ event_types: ['realm_user', 'subscription', 'user_group'] })).queueId;

  const sent = await api.post('/invites', {
    invitee_emails: 'new@example.com,\nother@example.com', stream_ids: [general], group_ids: [team], invite_as: 300, invite_expires_in_minutes: 60,
  });
  t.same(sent.body, { result: 'success', msg: '' });
  t.same(ofType(await drain(api.as(admin), adminQueue), 'invites_changed').map(({ id: _id, ...event }) => event), [{ type: 'invites_changed' }], 'administrators are told');
  t.same(await drain(api.as(member), memberQueue), [], 'members are not');

  const listed = await invites(api);
  t.equal(listed.length, 2);
  t.match(listed[0], { id: 1, email: 'new@example.com', invited_by_user_id: 1, invited_as: 300, is_multiuse: false, notify_referrer_on_join: true });
  t.equal((listed[0]!.expiry_date as number) - (listed[0]!.invited as number), 3600, 'expires in an hour');
  t.notOk('link_url' in listed[0]!, 'an email invitation shows no link');

  const mails = outbox(server);
  t.same(mails.map((mail) => mail.to), ['new@example.com', 'other@example.com'], 'one mail each');
  t.equal(mails[0]!.subject, 'Owner invited you to join Chat');
  t.match(mails[0]!.link, new RegExp(`^${url}/join/[a-z0-9]{24}/$`), 'a link to a page of this server, outside the API');

  const form = await page(mails[0]!.link);
  t.equal(form.status, 200);
  t.match(form.headers.get('content-type'), /^text\/html/);
  t.equal(form.headers.get('referrer-policy'), 'no-referrer', 'the key in the URL stays on this site');
  t.match(form.text, /<form method="post">/);
  t.match(form.text, /value="new@example.com" disabled/, 'the invited address, fixed');

  const weak = await page(mails[0]!.link, { full_name: 'New Person', password: 'abc' });
  t.equal(weak.status, 400, 'a weak password: the form again, with why');
  t.match(weak.text, /Password is too short/);
  t.match(weak.text, /value="New Person"/, 'keeping what was typed');
  const noName = await page(mails[0]!.link, { full_name: '  ', password: PASSWORD });
  t.match(noName.text, /Name too short!/);

  const done = await page(mails[0]!.link, { full_name: 'New Person', password: PASSWORD });
  t.equal(done.status, 200, done.text);
  t.match(done.text, /Your account <strong>new@example.com<\/strong> is ready/);
  const fetched = await login(api, 'new@example.com');
  t.equal(fetched.status, 200, 'the invitee logs in with the password chosen');
  const me = api.as({ email: 'new@example.com', key: fetched.body.api_key });
  const profile = (await me.get('/users/me')).body;
  t.match(profile, { full_name: 'New Person', role: 300, email: 'new@example.com' }, 'with the invited role');
  t.same((await me.get('/users/me/subscriptions')).body.subscriptions.map((s: { name: string }) => s.name), ['general'], 'in the invited channels');
  t.ok((await api.get(`/user_groups/${team}/members`)).body.members.includes(profile.user_id), 'and groups');

  const events = await drain(api, ownerQueue);
  t.match(ofType(events, 'realm_user'), [{ op: 'add', person: { user_id: profile.user_id, full_name: 'New Person', role: 300 } }], 'everyone learns of the account');
  t.match(ofType(events, 'user_group'), [{ op: 'add_members', group_id: team, user_ids: [profile.user_id] }]);

  const again = await page(mails[0]!.link, { full_name: 'Someone Else', password: PASSWORD });
  t.equal(again.status, 400);
  t.match(again.text, /already been used/, 'an email invitation makes one account');
  t.match((await page(mails[0]!.link)).text, /already been used/);
  t.same((await invites(api)).map((invite) => invite.email), ['other@example.com'], 'a used invitation is no longer pending');
  await api.createUser('other@example.com', 'Other');
  t.match((await page(mails[1]!.link)).text, /other@example.com already has an account in this organization. Log in instead./, 'an address that got its account another way');
  t.ok(ofType(await drain(api.as(admin), adminQueue), 'invites_changed').length > 0, 'its use is announced');
});

t.test('the JSON endpoint: what a link offers, and the account made from it', async (t) => {
  const server = await startTestServer(t);
  const { api, url } = server;
  await api.post('/invites', { invitee_emails: 'json@example.com', stream_ids: [] });
  const key = keyOf(outbox(server)[0]!.link);

  t.match((await api.as(null).get(`/invites/join/${key}`)).body, {
    result: 'success', realm_name: 'Chat', realm_url: url, email: 'json@example.com', is_multiuse: false, invited_as: 400,
  });
  t.same((await join_(api, key, { full_name: 'Jay' })).body, { result: 'error', msg: "Missing 'password' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'password' });
  t.same((await join_(api, key, { full_name: 'Jay', password: 'password' })).body, error('The password is too weak.'));
  const made = await join_(api, key, { full_name: ' Jay Son ', password: PASSWORD, email: 'ignored@example.com' });
  t.match(made.body, { result: 'success', email: 'json@example.com', full_name: 'Jay Son' }, 'an email invitation\'s address, whatever was sent');
  t.equal((await login(api, 'json@example.com')).status, 200);
  t.same((await join_(api, key, { full_name: 'Jay', password: PASSWORD })).body, error('This invitation has already been used to create an account. Log in instead.'));
  t.equal((await api.as(null).get('/invites/join/nosuchkey')).status, 404);
  t.same((await api.as(null).get('/invites/join/nosuchkey')).body, error('This invitation link is not valid. Check that you copied the whole link.'));
  const unknown = await page(`${url}/join/nosuchkey/`);
  t.equal(unknown.status, 404);
  t.match(unknown.text, /This link cannot be used/);
});

t.test('reusable links: made by whom the realm allows, used many times, revoked', async (t) => {
  const server = await startTestServer(t);
  const { api, url } = server;
  const member = await api.createUser('member@example.com', 'Member');
  const general = await channel(api, 'general', [1]);
  t.equal((await api.post('/default_streams', { stream_id: general })).status, 200);
  const extra = await channel(api, 'extra', [1]);

  t.same((await api.as(member).post('/invites/multiuse', {})).body, error('Insufficient permission'), 'administrators only, by default');
  const created = await api.post('/invites/multiuse', { invite_as: 600, stream_ids: [extra], include_realm_default_subscriptions: true, invite_expires_in_minutes: null });
  t.match(created.body, { result: 'success', invite_link: new RegExp(`^${url}/join/[a-z0-9]{24}/$`) });
  const link: string = created.body.invite_link;
  const listed = (await invites(api)).find((invite) => invite.is_multiuse)!;
  t.match(listed, { id: 1, invited_as: 600, expiry_date: null, link_url: link, invited_by_user_id: 1 });
  t.notOk('email' in listed);

  const form = await page(link);
  t.match(form.text, /name="email" type="email"/, 'the visitor gives an address');
  const badEmail = await page(link, { email: 'nope', full_name: 'Guest', password: PASSWORD });
  t.equal(badEmail.status, 400);
  t.match(badEmail.text, /Invalid email address/);
  t.match((await page(link, { email: 'member@example.com', full_name: 'Guest', password: PASSWORD })).text, /Email &#39;member@example.com&#39; already in use/);

  t.equal((await page(link, { email: 'guest1@example.com', full_name: 'Guest One', password: PASSWORD })).status, 200);
  const second = await join_(api, keyOf(link), { email: 'guest2@example.com', full_name: 'Guest Two', password: PASSWORD });
  t.match(second.body, { result: 'success', email: 'guest2@example.com' }, 'a link serves again');
  t.same((await join_(api, keyOf(link), { full_name: 'Guest Three', password: PASSWORD })).body, error('Invalid email address'), 'a link needs the address');
  for (const email of ['guest1@example.com', 'guest2@example.com']) {
    const key = (await login(api, email)).body.api_key;
    const guest = api.as({ email, key });
    t.match((await guest.get('/users/me')).body, { role: 600 }, `${email} is a guest`);
    t.same((await guest.get('/users/me/subscriptions')).body.subscriptions.map((s: { name: string }) => s.name).sort(), ['extra', 'general'], 'default and invited channels');
  }
  t.equal((await invites(api)).filter((invite) => invite.is_multiuse).length, 1, 'still pending');

  t.same((await api.as(member).delete('/invites/multiuse/1')).body, error('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'), 'only its maker or an administrator revokes it');
  t.same((await api.delete('/invites/multiuse/1')).body, { result: 'success', msg: '' });
  t.same((await api.delete('/invites/multiuse/1')).body, error('Invitation has already been revoked'));
  t.same((await api.delete('/invites/multiuse/99')).body, error('No such invitation'));
  const revoked = await page(link);
  t.equal(revoked.status, 400);
  t.match(revoked.text, /This invitation has been revoked/, 'a revoked link says so');
  t.equal((await invites(api)).length, 0);

  await api.patch('/realm', { create_multiuse_invite_group: { new: await groupId(api, 'role:members') } });
  t.equal((await api.as(member).post('/invites/multiuse', {})).status, 200, 'create_multiuse_invite_group: members now');
  t.same((await api.as(member).post('/invites/multiuse', { invite_as: 200 })).body, error('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'));
});

t.test('who may invite whom: can_invite_users_group and the inviter\'s role', async (t) => {
  const server = await startTestServer(t);
  const { api } = server;
  const member = api.as(await api.createUser('member@example.com', 'Member'));
  const moderatorUser = await api.createUser('mod@example.com', 'Mod');
  await api.patch(`/users/${moderatorUser.userId}`, { role: 300 });
  const moderator = api.as(moderatorUser);
  const guestUser = await api.createUser('guest@example.com', 'Guest');
  await api.patch(`/users/${guestUser.userId}`, { role: 600 });
  const invite = (client: ApiClient, params: Record<string, unknown> = {}) => client.post('/invites', { invitee_emails: 'x@example.com', stream_ids: [], ...params });

  t.same((await invite(api.as(guestUser))).body, error('Insufficient permission'), 'guests may not invite (role:members by default)');
  t.same((await invite(member, { invite_as: 200 })).body, error('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'));
  t.same((await invite(member, { invite_as: 300 })).body, error('Must be an organization administrator or moderator', 'UNAUTHORIZED_PRINCIPAL'));
  t.same((await invite(moderator, { invite_as: 100 })).body, error('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL'));
  t.same((await invite(moderator, { invite_as: 300 })).body, { result: 'success', msg: '' }, 'a moderator may invite moderators');
  t.same((await invite(member, { invitee_emails: 'y@example.com', invite_as: 600 })).body, { result: 'success', msg: '' }, 'a member may invite guests and members');
  t.equal((await api.post('/invites', { invitee_emails: 'z@example.com', stream_ids: [], invite_as: 100 })).status, 200, 'an owner may invite owners');
  t.equal((await member.register({ fetch_event_types: ['realm_user'] })).body.can_invite_others_to_realm, true);

  t.same((await invites(member)).map((i) => i.email), ['y@example.com'], 'a member sees the invitations they made');
  t.equal((await invites(api)).length, 3, 'an administrator sees all');
  const ids = Object.fromEntries((await invites(api)).map((i) => [i.email, i.id as number]));
  t.same((await member.delete(`/invites/${ids['x@example.com']}`)).body, error('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'), 'nor may they revoke others\'');
  t.same((await member.post(`/invites/${ids['x@example.com']}/resend`)).body, error('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'));
  t.equal((await member.delete(`/invites/${ids['y@example.com']}`)).status, 200, 'their own, yes');

  await api.patch('/realm', { can_invite_users_group: { new: await groupId(api, 'role:administrators') } });
  t.same((await invite(member, { invitee_emails: 'w@example.com' })).body, error('Insufficient permission'), 'can_invite_users_group: administrators now');
  t.equal((await member.register({ fetch_event_types: ['realm_user'] })).body.can_invite_others_to_realm, false);
  t.same((await invite(moderator, { invitee_emails: 'w@example.com' })).body, error('Insufficient permission'));
});

t.test('bad input: addresses, channels, groups, expiry, ids', async (t) => {
  const server = await startTestServer(t);
  const { api } = server;
  const memberUser = await api.createUser('member@example.com', 'Member');
  const member = api.as(memberUser);
  const gone = await api.createUser('gone@example.com', 'Gone');
  await api.delete(`/users/${gone.userId}`);
  const general = await channel(api, 'general', [1]);
  const secret = await channel(api, 'secret', [1], { invite_only: true });
  const team = (await api.post('/user_groups/create', { name: 'team', description: '', members: [1] })).body.group_id as number;
  const invite = (client: ApiClient, params: Record<string, unknown>) => client.post('/invites', { invitee_emails: 'x@example.com', stream_ids: [], ...params });
  const failed = (msg: string, errors: unknown[], sent: boolean) => ({ result: 'error', msg, code: 'INVITATION_FAILED', errors, sent_invitations: sent, license_limit_reached: false, daily_limit_reached: false });

  t.same((await api.post('/invites', { invitee_emails: 'x@example.com' })).body, { result: 'error', msg: "Missing 'stream_ids' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'stream_ids' });
  t.same((await invite(api, { invitee_emails: ' ,\n ' })).body, error('You must specify at least one email address.'));
  t.same((await invite(api, { invitee_emails: 'good@example.com, bad-address' })).body,
    failed("Some emails did not validate, so we didn't send any invitations.", [['bad-address', 'Invalid address.', false]], false));
  t.same((await invite(api, { invitee_emails: 'MEMBER@example.com, gone@example.com' })).body,
    failed("We weren't able to invite anyone.", [['MEMBER@example.com', 'Already has an account.', false], ['gone@example.com', 'Account has been deactivated.', true]], false));
  t.equal(outbox(server).length, 0, 'nothing was sent');
  t.same((await invite(api, { invitee_emails: 'fresh@example.com, member@example.com, Fresh@example.com' })).body,
    failed("Some of those addresses already have an account, so we didn't send them an invitation. We did send invitations to everyone else!", [['member@example.com', 'Already has an account.', false]], true));
  t.same(outbox(server).map((mail) => mail.to), ['fresh@example.com'], 'the others were invited, each address once');

  t.same((await invite(api, { stream_ids: [999] })).body, error('Invalid channel ID 999. No invites were sent.'));
  t.same((await invite(member, { stream_ids: [secret] })).body, error(`Invalid channel ID ${secret}. No invites were sent.`), 'a private channel the inviter cannot see');
  await api.patch('/realm', { can_add_subscribers_group: { new: await groupId(api, 'role:administrators') } });
  t.same((await invite(member, { stream_ids: [general] })).body, error('You do not have permission to subscribe other users to channels.'));
  t.equal((await api.post('/default_streams', { stream_id: general })).status, 200);
  t.equal((await invite(member, { invitee_emails: 'd@example.com', stream_ids: [general] })).status, 200, 'a default channel is always allowed');
  t.same((await invite(api, { group_ids: [999] })).body, error('Invalid user group ID: 999'));
  t.same((await invite(api, { group_ids: [await groupId(api, 'role:members')] })).body, error(`Invalid user group ID: ${await groupId(api, 'role:members')}`), 'not a system group');
  t.same((await invite(member, { group_ids: [team] })).body, error('Insufficient permission'), 'a group the inviter may not add to');
  t.same((await invite(api, { invite_expires_in_minutes: 0 })).body, error('Invalid invite_expires_in_minutes'));
  t.match((await invite(api, { invite_expires_in_minutes: 'soon' })).body, { code: 'BAD_REQUEST', msg: '"invite_expires_in_minutes" is not valid JSON.' });
  t.match((await invite(api, { invite_as: 250 })).body, { code: 'BAD_REQUEST', msg: /^Invalid invite_as/ });
  t.same((await api.delete('/invites/abc')).body, error('invite_id is not an integer'));
  t.same((await api.delete('/invites/999')).body, error('No such invitation'));
  t.same((await api.post('/invites/999/resend')).body, error('No such invitation'));
});

t.test('expiry, resend and revocation of email invitations', async (t) => {
  const server = await startTestServer(t);
  const { api } = server;
  const { queueId } = await api.register({ event_types: ['invites_changed'] });
  await api.post('/invites', { invitee_emails: 'late@example.com, revoked@example.com', stream_ids: [], invite_expires_in_minutes: 60 });
  const [late, revoked] = outbox(server);
  await drain(api, queueId);

  advanceClock(server, 61 * 60);
  t.same(await invites(api), [], 'an expired invitation is not listed');
  const expired = await page(late!.link);
  t.equal(expired.status, 400);
  t.match(expired.text, /This invitation has expired. Ask for a new one./);
  t.same((await join_(api, keyOf(late!.link), { full_name: 'Late', password: PASSWORD })).body, error('This invitation has expired. Ask for a new one.'));

  t.same((await api.post('/invites/1/resend')).body, { result: 'success', msg: '' });
  t.equal(ofType(await drain(api, queueId), 'invites_changed').length, 1);
  const resent = outbox(server).at(-1)!;
  t.equal(resent.to, 'late@example.com', 'mailed again');
  t.equal(resent.link, late!.link, 'with the same link');
  const [listed] = await invites(api);
  t.equal((listed!.expiry_date as number) - (listed!.invited as number), 3600, 'valid for an hour again, from now');
  t.equal((await page(late!.link, { full_name: 'Late Comer', password: PASSWORD })).status, 200, 'and it works');
  t.equal(ofType(await drain(api, queueId), 'invites_changed').length, 1, 'its use is announced');

  t.same((await api.delete('/invites/2')).body, { result: 'success', msg: '' });
  t.equal(ofType(await drain(api, queueId), 'invites_changed').length, 1);
  t.match((await page(revoked!.link)).text, /This invitation has been revoked/);
  t.same((await api.delete('/invites/2')).body, error('Invitation has already been revoked'));
  t.same((await api.post('/invites/2/resend')).body, error('No such invitation'));
  t.same((await api.delete('/invites/1')).body, error('No such invitation'), 'a used invitation cannot be revoked');
});

t.test('invitations survive a restart', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { dataDir });
  await first.api.post('/invites', { invitee_emails: 'a@example.com, b@example.com, c@example.com', stream_ids: [], invite_as: 200 });
  const link = (await first.api.post('/invites/multiuse', { invite_as: 600 })).body.invite_link as string;
  const [a, b, c] = outbox(first);
  await page(a!.link, { full_name: 'Ay', password: PASSWORD });
  await first.api.delete('/invites/2');
  await first.api.patch('/realm', { can_invite_users_group: { new: await groupId(first.api, 'role:administrators') } });
  const before = await invites(first.api);
  await first.stop();

  const second = await startTestServer(t, { dataDir });
  // The new server listens on another port: links are the same but for it.
  const moved = (url: string) => url.replace(first.url, second.url);
  t.same(await invites(second.api), before.map((invite) => (invite.link_url ? { ...invite, link_url: moved(invite.link_url as string) } : invite)), 'the same pending invitations');
  t.same(before.map((invite) => invite.email ?? invite.link_url), ['c@example.com', link]);
  t.match((await page(moved(a!.link))).text, /already been used/, 'a used one stays used');
  t.match((await page(moved(b!.link))).text, /has been revoked/, 'a revoked one stays revoked');
  t.equal((await page(moved(c!.link), { full_name: 'Cee', password: PASSWORD })).status, 200, 'a pending one still works');
  t.match((await login(second.api, 'c@example.com')).body, { result: 'success' });
  t.match((await second.api.as({ email: 'c@example.com', key: (await login(second.api, 'c@example.com')).body.api_key }).get('/users/me')).body, { role: 200 }, 'with the invited role');
  t.equal((await page(moved(link), { email: 'g@example.com', full_name: 'Gee', password: PASSWORD })).status, 200, 'so does the link');
  const member = await second.api.createUser('m@example.com', 'Em');
  t.same((await second.api.as(member).post('/invites', { invitee_emails: 'q@example.com', stream_ids: [] })).body, error('Insufficient permission'), 'and the permission setting');
});

t.test('CHAT_INVITATIONS_PER_DAY: the invitation mails of an organization in a day, sends and resends, are limited', async (t) => {
  t.equal(configFrom({}, {}).invitationsPerDay, 100, "the original's INVITES_DEFAULT_REALM_DAILY_MAX by default");
  t.equal(configFrom({}, { CHAT_INVITATIONS_PER_DAY: '0' }).invitationsPerDay, null, '0 is no limit');
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const server = await startTestServer(t, { dataDir, invitationsPerDay: 3, rateLimit: null });
  const { api } = server;
  const member = await api.createUser('member@example.com', 'Member');
  await api.patch('/realm', { can_invite_users_group: { new: await groupId(api, 'role:members') } });
  const limited = {
    result: 'error', code: 'INVITATION_FAILED', errors: [], sent_invitations: false, daily_limit_reached: true, license_limit_reached: false,
    msg: 'To protect users, this server limits the number of invitations you can send in one day. Because you have reached the limit, no invitations were sent.',
  };

  t.equal((await api.post('/invites', { invitee_emails: 'one@example.com, two@example.com', stream_ids: [] })).status, 200);
  t.same((await api.as(member).post('/invites', { invitee_emails: 'three@example.com, four@example.com', stream_ids: [] })).body, limited,
    'two more would pass the limit: none is sent, whoever asks');
  t.equal(outbox(server).length, 2, 'nothing was mailed');
  t.equal((await invites(api)).length, 2, 'nor made');
  t.equal((await api.as(member).post('/invites', { invitee_emails: 'three@example.com', stream_ids: [] })).status, 200, 'one more fits');
  t.same((await api.post('/invites/1/resend')).body, limited, 'a resend is a mail too');
  t.equal((await api.post('/invites/multiuse', {})).status, 200, 'a reusable link mails nobody');

  // Many at once: the realm decides one request after another.
  advanceClock(server, 24 * 60 * 60 + 1);
  const burst = await Promise.all(Array.from({ length: 10 }, (_, i) => api.post('/invites', { invitee_emails: `burst${i}@example.com`, stream_ids: [] })));
  t.equal(burst.filter((result) => result.status === 200).length, 3, 'a day later, three more');
  t.equal(outbox(server).length, 6);
  await server.stop();

  const restarted = await startTestServer(t, { dataDir, invitationsPerDay: 3, rateLimit: null });
  advanceClock(restarted, 24 * 60 * 60 + 1);
  t.same((await restarted.api.post('/invites', { invitee_emails: 'after@example.com', stream_ids: [] })).body, limited,
    'the mails of the day are remembered across a restart');
});
