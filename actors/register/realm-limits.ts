/**
 * The limits this server enforces and reports at registration. The values are the original server's
 * defaults, which clients size their inputs by.
 */
export const LIMITS = {
  max_message_length: 10_000,
  max_topic_length: 60,
  max_stream_name_length: 60,
  max_stream_description_length: 1024,
  max_channel_folder_name_length: 60,
  max_channel_folder_description_length: 1024,
  max_file_upload_size_mib: 100,
  max_avatar_file_size_mib: 5,
  max_icon_file_size_mib: 5,
  max_logo_file_size_mib: 5,
} as const;

/** Shown to clients that do not declare the `empty_topic_name` capability in place of the empty topic. */
export const EMPTY_TOPIC_DISPLAY_NAME = 'general chat';

/** Clients time out a long-poll after this; heartbeats come well before it. */
export const LONGPOLL_TIMEOUT_SECONDS = 90;

/** The original server's settings of the same names, which this server follows. */
export const SERVER_LIMITS = {
  max_reminder_note_length: 1000,
  max_bulk_new_subscription_messages: 100,
  // A deactivated organization's data is kept until an operator deletes it.
  server_min_deactivated_realm_deletion_days: null,
  server_max_deactivated_realm_deletion_days: null,
} as const;
