import type { Builder } from '../builder.ts';

/** fetch type `alert_words` */
export const alertWordsState: Builder = ({ personal }) => ({ alert_words: [...personal.alertWords] });
