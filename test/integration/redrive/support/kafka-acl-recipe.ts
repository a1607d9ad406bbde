import {
  AclOperationTypes as Op,
  AclPermissionTypes,
  AclResourceTypes as Resource,
  ResourcePatternTypes as Pattern,
} from 'kafkajs';
import type { Admin } from 'kafkajs';

/** The principals of the guide's Kafka recipe (docs/guide/08-redrive.md). */
export interface KafkaAclNames {
  readonly destination: string;
  readonly group: string;
  /** The consuming service's principal. */
  readonly service: string;
  /** The principal `messaging dlq …` runs as. */
  readonly redriveAdmin: string;
  /** The principal `messaging topology apply` runs as. */
  readonly topologyAdmin: string;
}

type Entry = [principal: string, resource: Resource, name: string, pattern: Pattern, operations: Op[]];

/**
 * The Kafka permission recipe of docs/guide/08-redrive.md, entry for entry, as kafkajs ACLs: the
 * `kafka-acls.sh` lines there and these rows must say the same. Everything not allowed is refused
 * (`StandardAuthorizer`, `allow.everyone.if.no.acl.found=false`).
 */
export function kafkaAclRecipe(n: KafkaAclNames): { allow: Entry[]; deny: Entry[] } {
  const dlq = `${n.destination}.${n.group}.dlq`;
  const redriveGroup = `${dlq}.redrive`;
  return {
    allow: [
      // The service: consume its destination in its group, write (never read) its DLQ and retry topics.
      [n.service, Resource.TOPIC, n.destination, Pattern.LITERAL, [Op.READ, Op.DESCRIBE]],
      [n.service, Resource.GROUP, n.group, Pattern.LITERAL, [Op.READ]],
      [n.service, Resource.TOPIC, dlq, Pattern.LITERAL, [Op.WRITE, Op.DESCRIBE]],
      [
        n.service,
        Resource.TOPIC,
        `${n.destination}.${n.group}.retry.`,
        Pattern.PREFIXED,
        [Op.READ, Op.WRITE],
      ],
      // The redrive admin: read the DLQ, move its redrive group, republish to the destination.
      [n.redriveAdmin, Resource.TOPIC, dlq, Pattern.LITERAL, [Op.READ, Op.DESCRIBE]],
      [n.redriveAdmin, Resource.GROUP, redriveGroup, Pattern.LITERAL, [Op.READ]],
      [n.redriveAdmin, Resource.TOPIC, n.destination, Pattern.LITERAL, [Op.WRITE, Op.DESCRIBE]],
      // The topology admin: create the destination's topics and read their settings.
      [
        n.topologyAdmin,
        Resource.TOPIC,
        n.destination,
        Pattern.PREFIXED,
        [Op.CREATE, Op.DESCRIBE, Op.DESCRIBE_CONFIGS],
      ],
    ],
    // Belt and braces: even if a broader ALLOW is added later, the service never reads its DLQ.
    deny: [[n.service, Resource.TOPIC, dlq, Pattern.LITERAL, [Op.READ]]],
  };
}

/** Creates the recipe's ACLs as the cluster admin. */
export async function applyKafkaAclRecipe(admin: Admin, names: KafkaAclNames): Promise<void> {
  const { allow, deny } = kafkaAclRecipe(names);
  const acl = (entries: Entry[], permissionType: AclPermissionTypes) =>
    entries.flatMap(([principal, resourceType, resourceName, resourcePatternType, operations]) =>
      operations.map((operation) => ({
        principal: `User:${principal}`,
        host: '*',
        resourceType,
        resourceName,
        resourcePatternType,
        operation,
        permissionType,
      })),
    );
  await admin.createAcls({
    acl: [...acl(allow, AclPermissionTypes.ALLOW), ...acl(deny, AclPermissionTypes.DENY)],
  });
}
