import { mutedUsersView } from '../../user/views.ts';
import type { WireRegisterKeys } from '../../wire/events.ts';
import type { Builder } from '../builder.ts';

/** fetch type `muted_users` */
export const mutedUsersState: Builder = ({ personal }) => ({ muted_users: mutedUsersView(personal) }) satisfies WireRegisterKeys<'muted_users'>;
