import { inheritedDescriptors } from '@fs-sandbox/helper';
import { FsError } from '@fs-sandbox/policy';

/**
 * A command runs the user's program, not the helper, so nothing inside the sandbox closes what it
 * inherits; and a descriptor survives exec, bwrap and every namespace: one open on a directory
 * outside every root is a way out as /proc/self/fd/N/name, past every mount. The broker's own
 * descriptors are close-on-exec (Node and libuv open them so); one that is not was inherited from
 * whoever started this process, or opened without O_CLOEXEC by the embedding program. Refused rather
 * than passed on: the fs-sandbox CLI closes such descriptors when it starts, a library user must.
 */
export function assertNothingPassedOn(): void {
  const passedOn = inheritedDescriptors();
  if (passedOn.length === 0) return;
  throw new FsError(
    'sandbox_unavailable',
    `this process holds descriptor${passedOn.length > 1 ? 's' : ''} ${passedOn.join(', ')} without close-on-exec, which a command would inherit past the sandbox; close ${passedOn.length > 1 ? 'them' : 'it'} or open with O_CLOEXEC before running commands`,
    { kind: 'sandboxPreparation' },
  );
}
