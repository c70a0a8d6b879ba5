// Compressed answers (contract section 15): an answer of 1 KiB or more in a textual type is sent
// br- or gzip-encoded when the client's Accept-Encoding accepts it (negotiation.ts), compressed
// once per kept answer and large ones off the main thread (compression.ts). Installed by
// src/app.ts when MARKETPLACE_MODULES names `compression`; src/http/respond.ts `sendReply` asks
// what it gives the host (`AnswerCompression`). Without it every answer is sent plain, with the
// same ETags a client that accepts no coding gets.

import type { MarketplaceModule } from '../../module.ts';
import { addVary } from '../../http/respond.ts';
import { compressed, isCompressible } from './compression.ts';
import { preferredEncoding, type Encoding } from './negotiation.ts';

export const compressionModule: MarketplaceModule = {
  name: 'compression',
  install(host) {
    host.useCompression({
      encodingFor(acceptEncoding, bytes, headers) {
        if (!isCompressible(bytes, headers['Content-Type'])) return null;
        headers.Vary = addVary(headers.Vary, 'Accept-Encoding');
        return preferredEncoding(acceptEncoding);
      },
      compressed: (bytes, encoding, onPoolWork) => compressed(bytes, encoding as Encoding, onPoolWork),
    });
  },
};
