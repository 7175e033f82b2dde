import { FsError } from '@fs-sandbox/policy/core';
import { type Win32Api, win32Failure } from './win32-api.js';

/** One name for every launcher of this login session. */
const MUTEX_NAME = 'Local\\fs-sandbox-acl-edits';
const WAIT_MS = 30_000;
const WAIT_OBJECT_0 = 0;
const WAIT_ABANDONED = 0x80;

/**
 * Runs `edit` while holding a session-wide mutex. A DACL change is read-modify-write; two launchers
 * editing the same directory at once could each write back a DACL without the other's ACE, and a
 * lost deny ACE would leave a read-only path writable for the other run.
 */
export function withAclLock<T>(api: Win32Api, edit: () => T): T {
  const mutex = api.CreateMutexW(null, 0, MUTEX_NAME);
  if (!mutex) throw win32Failure(api, 'CreateMutexW');
  try {
    const waited = api.WaitForSingleObject(mutex, WAIT_MS);
    // An abandoned mutex (its last owner died) is still ours now.
    if (waited !== WAIT_OBJECT_0 && waited !== WAIT_ABANDONED) {
      throw new FsError(
        'sandbox_unavailable',
        `another sandbox run held the ACL lock for more than ${WAIT_MS} ms (wait status ${waited})`,
      );
    }
    try {
      return edit();
    } finally {
      api.ReleaseMutex(mutex);
    }
  } finally {
    api.CloseHandle(mutex);
  }
}
