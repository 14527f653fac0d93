import t from 'tap';
import { channel, sendToChannel } from './helpers/messages.ts';
import { startTestServer } from './helpers/server.ts';

/**
 * The channel's own permissions over its messages (feature levels 396, 402 and 407): deleting, moving within
 * and out of the channel and resolving topics, granted by the channel beyond the organization's settings.
 */
t.test('channel-level permissions to delete, move and resolve add to the organization\'s', async (t) => {
  const { api: owner } = await startTestServer(t);
  const ann = await owner.createUser('ann@example.com', 'Ann');
  const groups = (await owner.get('/user_groups')).body.user_groups as { id: number; name: string }[];
  const group = (name: string) => groups.find((candidate) => candidate.name === name)!.id;
  // The organization leaves these to administrators.
  for (const setting of ['can_move_messages_between_topics_group', 'can_move_messages_between_channels_group', 'can_resolve_topics_group', 'can_delete_own_message_group']) {
    t.equal((await owner.patch('/realm', { [setting]: JSON.stringify({ new: group('role:administrators') }) })).status, 200, setting);
  }
  const general = await channel(owner, 'general', [1, ann.userId]);
  const other = await channel(owner, 'other', [1, ann.userId]);
  const stream = (await owner.get(`/streams/${general}`)).body.stream;
  for (const name of ['can_delete_any_message_group', 'can_delete_own_message_group', 'can_move_messages_out_of_channel_group', 'can_move_messages_within_channel_group', 'can_resolve_topics_group']) {
    t.equal(stream[name], group('role:nobody'), `${name}: nobody by default`);
  }

  const mine = await sendToChannel(owner.as(ann), general, 'lunch', 'pizza?');
  const refusals = async () => [
    (await owner.as(ann).patch(`/messages/${mine}`, { topic: 'dinner' })).status,
    (await owner.as(ann).patch(`/messages/${mine}`, { topic: '✔ lunch' })).status,
    (await owner.as(ann).patch(`/messages/${mine}`, { stream_id: other })).status,
    (await owner.as(ann).delete(`/messages/${mine}`)).status,
  ];
  t.same(await refusals(), [400, 400, 400, 400], 'nothing allowed by the organization');

  const annOnly = JSON.stringify({ new: { direct_members: [ann.userId], direct_subgroups: [] } });
  t.equal((await owner.patch(`/streams/${general}`, { can_resolve_topics_group: annOnly })).status, 200);
  t.equal((await owner.as(ann).patch(`/messages/${mine}`, { topic: '✔ lunch' })).status, 200, 'resolving, granted by the channel');
  t.equal((await owner.as(ann).patch(`/messages/${mine}`, { topic: 'dinner' })).status, 400, 'but not moving');
  t.equal((await owner.patch(`/streams/${general}`, { can_move_messages_within_channel_group: annOnly })).status, 200);
  t.equal((await owner.as(ann).patch(`/messages/${mine}`, { topic: 'dinner' })).status, 200, 'moving within the channel');
  t.equal((await owner.as(ann).patch(`/messages/${mine}`, { stream_id: other })).status, 400, 'but not out of it');
  t.equal((await owner.patch(`/streams/${general}`, { can_move_messages_out_of_channel_group: annOnly })).status, 200);
  t.equal((await owner.as(ann).patch(`/messages/${mine}`, { stream_id: other })).status, 200, 'out of the channel');

  // Now in `other`: its own settings apply.
  t.equal((await owner.as(ann).delete(`/messages/${mine}`)).status, 400);
  t.equal((await owner.patch(`/streams/${other}`, { can_delete_own_message_group: annOnly })).status, 200);
  t.equal((await owner.as(ann).delete(`/messages/${mine}`)).status, 200, 'deleting one\'s own, granted by the channel');
  const owners = await sendToChannel(owner, other, 'x', 'the owner\'s');
  t.equal((await owner.as(ann).delete(`/messages/${owners}`)).status, 400, 'not someone else\'s');
  t.equal((await owner.patch(`/streams/${other}`, { can_delete_any_message_group: annOnly })).status, 200);
  t.equal((await owner.as(ann).delete(`/messages/${owners}`)).status, 200, 'any message, granted by the channel');
});
