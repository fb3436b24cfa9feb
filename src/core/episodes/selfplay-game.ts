import type { Turn } from './episode';
import { splitParts } from './transcript';

const ROLES = ['attacker', 'assessor'] as const;

/**
 * The game's closing turn left inside the attacker's reply: with special tokens removed, a response that ends with a user
 * turn is not split (splitTranscript takes a response to end with the assistant, so that "user" alone on a line of an
 * answer is not a turn). The game's loop starts that turn with "Assessor: " or "Referee: ", which no answer line does.
 */
const CLOSING = /\nuser\n(?=(?:Assessor|Referee):)/g;

function splitClosing(turns: Turn[]): Turn[] {
  const last = turns.at(-1);
  if (!last || last.role !== 'assistant' || last.environment) return turns;
  const at = [...last.content.matchAll(CLOSING)].at(-1);
  if (!at) return turns;
  const reply = last.content.slice(0, at.index).trimEnd();
  const closing = last.content.slice(at.index + at[0].length).trim();
  return [
    ...turns.slice(0, -1),
    { ...last, content: reply, parts: splitParts(reply) },
    { role: 'user', content: closing, parts: splitParts(closing), environment: true },
  ];
}

/**
 * A MEDEC self-play sample's turns named by who plays them. One policy plays both roles and each sample trains one
 * (`game_role`, returned by the reward function), so the chat roles alone do not tell the attacker's move from the
 * assessor's verdict. Other records' turns come back as they are; a name the transcript already gives (a tool's) is kept.
 */
export function labelGameTurns(turns: Turn[], extra: Record<string, unknown>): Turn[] {
  const role = extra.game_role;
  if (role !== 'attacker' && role !== 'assessor') return turns;
  const other = ROLES.find((r) => r !== role)!;
  const split = splitClosing(turns);
  // The assessor judged the note the attacker wrote only when the game had an attack and the attacker's edit was legal.
  const judgesAttack =
    role === 'assessor' && typeof extra.game_mode === 'string' && extra.game_mode.startsWith('adversarial') && extra.attack_valid === 1;
  let note = -1;
  if (judgesAttack)
    for (let i = split.length - 1; i >= 0 && note < 0; i--) if (split[i]!.role === 'user' && !split[i]!.environment) note = i;
  return split.map((t, i): Turn => {
    if (t.name) return t;
    let name: string | undefined;
    // A refused move ends the game before the opponent plays: the referee says why.
    if (t.environment) name = t.content.trimStart().startsWith('Referee:') ? 'referee' : other;
    else if (t.role === 'assistant') name = role;
    else if (i === note) name = "attacker's note";
    return name ? { ...t, name } : t;
  });
}
