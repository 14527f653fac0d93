import type { RealmState } from '../state.ts';
import { linkedMessages } from './decide.ts';
import type { Attachment } from './state.ts';

/** The API's Attachment object (times in milliseconds, as the original sends them). */
export function attachmentView(state: RealmState, attachment: Attachment) {
  return {
    id: attachment.id,
    name: attachment.name,
    path_id: attachment.pathId,
    size: attachment.size,
    create_time: attachment.createTime,
    messages: linkedMessages(state, attachment).map((message) => ({ id: message.id, date_sent: message.timestamp * 1000 })),
  };
}

/** Bytes of the user's files: `upload_space_used`. */
export function uploadSpaceUsed(state: RealmState, userId: number): number {
  return state.attachments.bytesByOwner.get(userId) ?? 0;
}

export function attachmentsOf(state: RealmState, userId: number): Attachment[] {
  return [...state.attachments.byId.values()].filter((attachment) => attachment.ownerId === userId);
}
