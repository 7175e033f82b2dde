/**
 * @fs-sandbox/broker/acp: an Agent Client Protocol client's file system, served by the broker in a
 * sandbox (`withAcpFileSystem(client(), { broker, sandbox })`).
 */
export {
  ACP_FILE_SYSTEM_CAPABILITIES,
  type AcpFileSystem,
  type AcpFileSystemOptions,
  acpFileSystem,
  withAcpFileSystem,
} from './acp-file-system.js';
