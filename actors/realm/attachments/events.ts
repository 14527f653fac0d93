import type { ApiEvent, Delivery } from '../../events.ts';
import type { WireEventOf } from '../../wire/events.ts';
import type { MessageChange } from '../messages/changes.ts';
import type { RealmState } from '../state.ts';
import type { AttachmentChange } from './changes.ts';
import { attachmentView, uploadSpaceUsed } from './views.ts';

/** `attachment` events go to the file's owner only. */
export function attachmentEvents(state: RealmState, change: AttachmentChange): Delivery[] {
  switch (change.type) {
    case 'attachment.uploaded': {
      const attachment = state.attachments.byId.get(change.attachment.id);
      if (!attachment) return [];
      return [toOwner(state, attachment.ownerId, { type: 'attachment', op: 'add', attachment: attachmentView(state, attachment), upload_space_used: uploadSpaceUsed(state, attachment.ownerId) } satisfies WireEventOf<'attachment', 'add'>)];
    }
    case 'attachment.deleted':
      return [toOwner(state, change.ownerId, { type: 'attachment', op: 'remove', attachment: { id: change.attachmentId }, upload_space_used: uploadSpaceUsed(state, change.ownerId) } satisfies WireEventOf<'attachment', 'remove'>)];
  }
}

/** A send or content edit that changed which messages link a file: an `update` to its owner. */
export function attachmentLinkEvents(state: RealmState, change: MessageChange): Delivery[] {
  let ids: number[] = [];
  if (change.type === 'message.sent') ids = change.message.attachmentIds ?? [];
  else if (change.type === 'message.edited') ids = [...(change.content?.attachmentIds ?? []), ...(change.detachedAttachmentIds ?? []), ...(change.unlinkedAttachmentIds ?? [])];
  const out: Delivery[] = [];
  for (const id of new Set(ids)) {
    const attachment = state.attachments.byId.get(id);
    if (attachment) out.push(toOwner(state, attachment.ownerId, { type: 'attachment', op: 'update', attachment: attachmentView(state, attachment), upload_space_used: uploadSpaceUsed(state, attachment.ownerId) } satisfies WireEventOf<'attachment', 'update'>));
  }
  return out;
}

function toOwner(state: RealmState, ownerId: number, event: ApiEvent): Delivery {
  return { realmId: state.realmId, audience: { kind: 'users', userIds: [ownerId] }, event };
}
