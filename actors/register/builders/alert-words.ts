import type { WireRegisterKeys } from '../../wire/events.ts';
import type { Builder } from '../builder.ts';

/** fetch type `alert_words` */
export const alertWordsState: Builder = ({ personal }) => ({ alert_words: [...personal.alertWords] }) satisfies WireRegisterKeys<'alert_words'>;
