import { z } from 'zod';
import { reminderText } from '../../actors/realm/notifications/reminders.ts';
import { remindersByTime } from '../../actors/user/views.ts';
import { p } from '../http/params.ts';
import { botDomain } from './bots.ts';
import { changeOf } from './change-of.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

/** Reminders: the notification bot sends the user a message it asked to be reminded of, at the time it chose. */
export const reminderRoutes = [
  route({
    method: 'GET',
    path: '/reminders',
    auth: 'user',
    params: {},
    handle: ({ services, realm, user }) => ({ reminders: remindersByTime(services.runtime.userState(realm.realmId, user.userId)) }) satisfies WireResponse<'/reminders', 'get'>,
  }),

  route({
    method: 'POST',
    path: '/reminders',
    auth: 'user',
    params: { message_id: p.int(z.number().int()), scheduled_delivery_timestamp: p.int(z.number().int()), note: p.string().optional() },
    async handle({ services, realm, user }, params) {
      const text = reminderText(realm, user.userId, params.message_id, params.note);
      await services.runtime.execute(realm.realmId, { type: 'notification_bot.ensure', caller: { kind: 'user', userId: user.userId }, botDomain: botDomain(services, realm) });
      const changes = await services.runtime.executeUser(realm.realmId, user.userId, {
        type: 'reminder.create',
        maxReminders: services.config.maxRemindersPerUser,
        message: {
          type: 'private', to: [user.userId], topic: '', content: text.markdown, renderedContent: text.html,
          deliverAt: params.scheduled_delivery_timestamp, reminderTargetMessageId: params.message_id,
        },
      });
      return { reminder_id: changeOf(changes, 'scheduled.created').message.id } satisfies WireResponse<'/reminders', 'post'>;
    },
  }),

  route({
    method: 'DELETE',
    path: '/reminders/{reminder_id}',
    auth: 'user',
    params: { reminder_id: p.int(z.number().int()) },
    async handle({ services, realm, user }, params) {
      await services.runtime.executeUser(realm.realmId, user.userId, { type: 'reminder.delete', id: params.reminder_id });
      return {} satisfies WireResponse<'/reminders/{reminder_id}', 'delete'>;
    },
  }),
];
