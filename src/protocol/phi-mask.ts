import { z } from 'zod';

/** The "Mask identifiers" toggle, in every webview that shows data (dataset preview, episode replay, reward playground). */

/** To the page: whether `medrl.phi.mask` is on; sent when the page is ready and whenever the setting changes. */
export const phiMaskState = z.object({ type: z.literal('phiMask'), on: z.boolean() });

/** From the page: the user turned masking on or off. */
export const setPhiMask = z.object({ type: z.literal('setPhiMask'), on: z.boolean() });
