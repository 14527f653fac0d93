import { mutedTopicsView, userTopicsView } from '../../user/views.ts';
import type { WireRegisterKeys } from '../../wire/events.ts';
import type { Builder } from '../builder.ts';

/** fetch type `user_topic`: the caller's topic visibility policies. */
export const userTopicsState: Builder = ({ personal }, { capabilities }) => ({
  user_topics: userTopicsView(personal, capabilities?.empty_topic_name === true),
}) satisfies WireRegisterKeys<'user_topics'>;

/**
 * fetch type `muted_topics`, the list from before topic policies (feature level 134): the muted topics as
 * [channel name, topic, UNIX seconds]. A client that names `user_topic` too reads that instead, so it is left
 * out then, as in the original.
 */
export const mutedTopicsState: Builder = ({ realm, personal }, { fetchTypes, capabilities }) => {
  if (fetchTypes !== null && fetchTypes.includes('user_topic')) return {};
  return { muted_topics: mutedTopicsView(personal, capabilities?.empty_topic_name === true, (id) => realm.channels.get(id)?.name) } satisfies WireRegisterKeys<'muted_topics'>;
};
