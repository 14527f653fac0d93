import { userTopicsView } from '../../user/views.ts';
import type { Builder } from '../builder.ts';

/** fetch type `user_topic`: the caller's topic visibility policies. */
export const userTopicsState: Builder = ({ personal }, { capabilities }) => ({
  user_topics: userTopicsView(personal, capabilities?.empty_topic_name === true),
});
