import { z } from 'zod';
import { prepareReadReceipts, readReceipts, type ReceiptPrivacy } from '../../actors/realm/messages/read-receipts.ts';
import { REPORT_REASONS, type ReportType } from '../../actors/realm/notifications/report.ts';
import { settingValue } from '../../actors/user/settings.ts';
import { p } from '../http/params.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

const messageId = p.int(z.number().int());
const reportType = z.enum(Object.keys(REPORT_REASONS) as [ReportType, ...ReportType[]], { error: 'Invalid report_type' });

/** What others learn of a message: who has read it, and a report to the moderators. */
export const messageReportRoutes = [
  route({
    method: 'GET',
    path: '/messages/{message_id}/read_receipts',
    auth: 'user',
    params: { message_id: messageId },
    async handle({ services, realm, user }, params) {
      const userState = (id: number) => services.runtime.userState(realm.realmId, id);
      const privacy: ReceiptPrivacy = {
        sendsReadReceipts: (id) => settingValue(userState(id).settings, 'send_read_receipts') === true,
        hasMuted: (id, other) => userState(id).mutedUsers.has(other),
      };
      await prepareReadReceipts(realm, user.userId, params.message_id, privacy);
      const user_ids = readReceipts(services.runtime.realmState(realm.realmId), user.userId, params.message_id, privacy);
      return { user_ids } satisfies WireResponse<'/messages/{message_id}/read_receipts', 'get'>;
    },
  }),

  route({
    method: 'POST',
    path: '/messages/{message_id}/report',
    auth: 'user',
    params: { message_id: messageId, report_type: p.string(reportType), description: p.string().default('') },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, {
        type: 'message.report', caller: { kind: 'user', userId: user.userId },
        messageId: params.message_id, reportType: params.report_type, description: params.description,
      });
      return {} satisfies WireResponse<'/messages/{message_id}/report', 'post'>;
    },
  }),
];
