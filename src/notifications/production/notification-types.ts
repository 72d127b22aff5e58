import type { OpenAPIObject } from '@nestjs/swagger';
import { DELIVERY_KINDS } from '../entities/notification-delivery.entity';

/**
 * The registry of notification types: every type is defined once, by the module that produces it, with
 * `defineNotificationType`. The definition gives the type's subject, the texts every channel shows (the inbox
 * item's title and content, the e-mail and messenger texts) and the send-time checks that drop a delivery
 * whose recipient no longer needs it. The OpenAPI enums of `type` (`documentNotificationTypes`), the delivery claim's checks and the fan-out
 * statements follow from here; the database's `notifications_type_check` lists the same names (a migration
 * adds a type with `setNotificationTypes` of `migrations/lib/notification-types.ts`), and
 * `test/notifications/notification-types.e2e-spec.ts` fails when the three disagree.
 */

/**
 * What a notification is about:
 * - `task`: a task; the inbox item and the webhook `data` carry the task and its class;
 * - `class`: a class; `taskId` and `taskTitle` are null, the webhook `data` carries the class;
 * - `entity`: a row of the producing module in a class (e.g. an announcement), named by `subject_id`;
 *   shown like a class notice, and the type's `staleWhen` says when that row is gone.
 */
export type NotificationSubject = 'task' | 'class' | 'entity';

/** SQL of a send-time check: when `when` holds, the delivery is left unsent with `reason` (`not sent: …`). */
export interface StaleCheck {
  /**
   * A condition over `n` (the notification), `t` (its task; all columns null for other subjects) and `u`
   * (the recipient's `users` row).
   */
  when: string;
  reason: string;
}

/** The SQL expressions of the title and content, both plain text. */
export interface NotificationTexts {
  title: string;
  content: string;
}

export interface NotificationTypeDefinition<Var extends string = string> {
  /** Upper-case name, at most 30 characters: the `type` of the inbox item, the webhook body and the log. */
  readonly name: string;
  readonly subject: NotificationSubject;
  /**
   * Title and content as SQL, given the SQL of the variables the producer binds (`Var`). They may use the
   * aliases of the fan-out statement: `u` the recipient (its time zone: `localTime`), `m` the membership,
   * `c` the class and, for a task subject, `t` the task.
   */
  readonly texts: (vars: Record<Var, string>) => NotificationTexts;
  /** Checks at every delivery attempt beyond the built-in ones (see `DeliveriesRepository`), in order. */
  readonly staleWhen?: readonly StaleCheck[];
}

const TYPE_NAME = /^[A-Z][A-Z0-9_]{0,29}$/;

const registry = new Map<string, NotificationTypeDefinition<never>>();

/**
 * Registers a type; the module producing it calls this at the top level of the file that defines it, so the
 * type is known as soon as the module is loaded. A second definition of one name is a programming error.
 */
export function defineNotificationType<Var extends string>(
  definition: NotificationTypeDefinition<Var>,
): NotificationTypeDefinition<Var> {
  if (!TYPE_NAME.test(definition.name)) {
    throw new Error(`Notification type name ${definition.name} is not 1-30 upper-case letters, digits or _`);
  }
  if (registry.has(definition.name)) throw new Error(`Notification type ${definition.name} is defined twice`);
  if ((DELIVERY_KINDS as readonly string[]).includes(definition.name)) {
    throw new Error(`${definition.name} names deliveries of their own kind, not a notification type`);
  }
  registry.set(definition.name, definition as NotificationTypeDefinition<never>);
  return definition;
}

/** Every registered type, in the order of definition. */
export function notificationTypes(): NotificationTypeDefinition<never>[] {
  return [...registry.values()];
}

/** The names of every registered type (the OpenAPI enum of `type`). */
export function notificationTypeNames(): string[] {
  return [...registry.keys()];
}

/** A time in the recipient's time zone (alias `u` = users), e.g. `Tue 03 Mar 2026 17:30 (Asia/Shanghai)`. */
export const localTime = (time: string): string => `notification_local_time(${time}, u.timezone)`;

/**
 * Sets the OpenAPI enums of notification and delivery types from the registry once the document is built:
 * a property decorator reads its enum when its class loads, before the modules loaded after it have defined
 * their types.
 */
export function documentNotificationTypes(document: OpenAPIObject, deliveryKinds: readonly string[]): void {
  const schemas = document.components?.schemas ?? {};
  for (const [name, values] of [
    ['NotificationType', notificationTypeNames()],
    ['DeliveryType', [...notificationTypeNames(), ...deliveryKinds]],
  ] as const) {
    const schema = schemas[name];
    if (schema && 'enum' in schema) schema.enum = [...values];
  }
}
