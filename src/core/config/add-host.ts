import { isMap, parseDocument } from 'yaml';
import { withLineEndingsOf } from './yaml-document';

/**
 * medrl.yaml with a new SSH host under `hosts:` (named after its ~/.ssh/config alias), edited through the yaml Document
 * API so the user's comments, order, formatting and line endings (CRLF) stay as they were.
 */
export function addSshHost(text: string, name: string, alias: string, file: string): string {
  const doc = parseDocument(text);
  if (doc.errors.length) throw new Error(`${file}: fix its YAML errors first: ${doc.errors[0]!.message.split('\n')[0]}`);
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name))
    throw new Error(`"${name}" cannot be a host name in ${file} (letters, digits, ".", "_" and "-")`);
  const hosts = doc.get('hosts', true);
  if (hosts !== undefined && hosts !== null && !isMap(hosts)) throw new Error(`${file}: hosts must be a mapping`);
  if (isMap(hosts) && hosts.has(name)) throw new Error(`${file}: host "${name}" is already there`);
  const entry = doc.createNode({ ssh: alias });
  if (isMap(hosts)) {
    // An empty `hosts: {}` is written in flow style; a host entry reads better as a block.
    if (hosts.items.length === 0) hosts.flow = false;
    hosts.set(doc.createNode(name), entry);
  } else doc.set('hosts', doc.createNode({ [name]: { ssh: alias } }));
  return withLineEndingsOf(text, doc.toString());
}
