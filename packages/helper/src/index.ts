/**
 * @fs-sandbox/helper as a library: the same operations the sandboxed helper program performs, for
 * the broker to run in-process when a context needs no platform sandbox, plus the wire framing of
 * the helper protocol. Replies carry file bytes as Buffers (`reply.binary`), never as base64.
 */
export { helperBundlePath } from './bundle-path.js';
export { decodeReply, encodeReply, encodeRequest, ProtocolError } from './framing.js';
export { closeInheritedDescriptors, inheritedDescriptors } from './inherited-descriptors.js';
export { LANDLOCK_SETUP_FAILED } from './landlock-exit.js';
export { EXPECT_MOUNTS_FLAG, WARM_UP_FLAG } from './program-args.js';
export type {
  FreshnessEntry,
  HelperErrorReply,
  HelperOkReply,
  HelperReply,
  HelperRequest,
  ReplyBinary,
  ReplyBinaryField,
} from './protocol.js';
export { RIPGREP_FIXED_ARGS, RIPGREP_THREADS } from './ripgrep/rg-args.js';
export { type RunOptions, runRequest } from './run-request.js';
export { encodeText } from './text-codec.js';
