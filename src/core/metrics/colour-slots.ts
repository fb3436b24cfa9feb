import { createHash } from 'node:crypto';

/** Colours a chart tells apart: the theme's six chart colours drawn solid, then the same six dashed. */
export const COLOUR_SLOTS = 12;

/** A key's own slot: the first four bytes of its sha256, so the same run gets the same slot in every session and window. */
function ownSlot(key: string, slots: number): number {
  return createHash('sha256').update(key).digest().readUInt32BE(0) % slots;
}

/**
 * Each run's colour slot (keys: run ids or file names, in the view's order): its own slot, so a run is the same
 * colour whenever it is charted, alone or compared; a run whose slot an earlier run of the same view took gets the next
 * free one. Past `slots` runs, slots repeat.
 */
export function colourSlots(keys: readonly string[], slots = COLOUR_SLOTS): number[] {
  const taken = new Set<number>();
  return keys.map((key) => {
    let slot = ownSlot(key, slots);
    for (let i = 0; i < slots && taken.has(slot); i++) slot = (slot + 1) % slots;
    taken.add(slot);
    if (taken.size === slots) taken.clear();
    return slot;
  });
}
