import * as path from 'node:path';
import * as ts from 'typescript';
import { MESSAGING_DEFAULTS } from './messaging-defaults';

/** Where each options interface's defaults live in MESSAGING_DEFAULTS. */
const DEFAULTS_OF: Record<string, string> = {
  KafkaTransportOptions: 'transport.kafka',
  RabbitMqTransportOptions: 'transport.rabbitmq',
  RelayOptions: 'relay',
  OutboxRetentionOptions: 'retention',
  ConsumerOptions: 'consumers',
  VersionHoldOptions: 'consumers.versionHold',
  TenantOptions: 'tenants',
};

/** `path → "Default N"` of every option documented with a literal default (numbers, booleans, `words`). */
function documentedDefaults(): Map<string, string> {
  const file = path.join(__dirname, '..', 'messaging-options.interface.ts');
  const source = ts.createSourceFile(file, ts.sys.readFile(file) ?? '', ts.ScriptTarget.Latest, true);
  const found = new Map<string, string>();
  const visitMembers = (members: ts.NodeArray<ts.TypeElement>, prefix: string) => {
    for (const member of members) {
      if (!ts.isPropertySignature(member)) continue;
      const name = `${prefix}.${member.name.getText(source)}`;
      const doc = ts
        .getJSDocCommentsAndTags(member)
        .map((d) => d.getText(source))
        .join(' ');
      const literal = /Default:? (\d+|true|false|`[a-z]+`)(?!\w)/.exec(doc);
      if (literal) found.set(name, literal[1].replaceAll('`', ''));
      if (member.type && ts.isTypeLiteralNode(member.type)) visitMembers(member.type.members, name);
    }
  };
  source.forEachChild((node) => {
    if (ts.isInterfaceDeclaration(node) && DEFAULTS_OF[node.name.text]) {
      visitMembers(node.members, DEFAULTS_OF[node.name.text]);
    }
  });
  return found;
}

/** `path → value` of every leaf of MESSAGING_DEFAULTS. */
function leaves(value: unknown, prefix = ''): Map<string, string> {
  const out = new Map<string, string>();
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    const name = prefix ? `${prefix}.${key}` : key;
    if (typeof child === 'object' && child !== null) leaves(child, name).forEach((v, k) => out.set(k, v));
    else out.set(name, String(child));
  }
  return out;
}

describe('MESSAGING_DEFAULTS', () => {
  it('is what the options document, option by option', () => {
    expect(Object.fromEntries(documentedDefaults())).toEqual(Object.fromEntries(leaves(MESSAGING_DEFAULTS)));
  });
});
