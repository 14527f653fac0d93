/**
 * The newest feature level whose behaviour this server deliberately implements: the document's (420), whose
 * changes from 371 on were checked one by one (issue 15). Raise it only together with the behaviour it stands for.
 */
export const FEATURE_LEVEL = 420;
export const VERSION = '11.0-chat-0.1.0';
/** The release of the original server whose API this one follows. */
export const MERGE_BASE = '11.0';
