import { userTopicsView } from '../../user/views.ts';
import { VisibilityPolicy } from '../../user/state.ts';
import type { Builder } from '../builder.ts';

/** fetch type `user_topic`: the caller's topic visibility policies. */
export const userTopicsState: Builder = ({ personal }, { capabilities }) => ({
  user_topics: userTopicsView(personal, capabilities?.empty_topic_name === true),
});

/**
 * fetch type `muted_topics`, the list from before topic policies (feature level 134): the muted topics as
 * [channel name, topic, UNIX seconds]. A client that names `user_topic` too reads that instead, so it is left
 * out then, as in the original.
 */
export const mutedTopicsState: Builder = ({ realm, personal }, { fetchTypes, capabilities }) => {
  if (fetchTypes !== null && fetchTypes.includes('user_topic')) return {};
  const muted = userTopicsView(personal, capabilities?.empty_topic_name === true)
    .filter((topic) => topic.visibility_policy === VisibilityPolicy.muted)
    .flatMap((topic) => {
      const channel = realm.channels.get(topic.stream_id);
      return channel ? [[channel.name, topic.topic_name, topic.last_updated]] : [];
    });
  return { muted_topics: muted };
};
