// An ACP client (an editor, say) whose file system is fs-sandbox: the agent's fs/read_text_file and
// fs/write_text_file run in a sandbox that can write only the workspace. Here the agent is an
// in-process one that reads a file and writes another; a real client connects its agent process's
// stdio with ndJsonStream instead.
//
//   node examples/acp-file-system.mjs /path/to/workspace
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { agent, client, methods, ndJsonStream } from '@agentclientprotocol/sdk';
import { createBroker } from '@fs-sandbox/broker';
import { ACP_FILE_SYSTEM_CAPABILITIES, withAcpFileSystem } from '@fs-sandbox/broker/acp';

const workspace = resolve(process.argv[2] ?? '.');
const sandbox = {
  permissions: {
    type: 'managed',
    file_system: {
      type: 'restricted',
      entries: [{ path: { type: 'path', path: pathToFileURL(workspace).href }, access: 'write' }],
    },
    network: 'restricted',
  },
};

const broker = createBroker();
const editor = withAcpFileSystem(client({ name: 'example-editor' }), { broker, sandbox });
console.log('client capabilities:', JSON.stringify(ACP_FILE_SYSTEM_CAPABILITIES));

const toAgent = new TransformStream();
const toEditor = new TransformStream();
const connection = editor.connect(ndJsonStream(toAgent.writable, toEditor.readable));
try {
  await agent({ name: 'example-agent' }).connectWith(
    ndJsonStream(toEditor.writable, toAgent.readable),
    async (ctx) => {
      const notes = join(workspace, 'NOTES.md');
      await ctx.request(methods.client.fs.writeTextFile, {
        sessionId: 's',
        path: notes,
        content: '# notes\nwritten in a sandbox\n',
      });
      const { content } = await ctx.request(methods.client.fs.readTextFile, {
        sessionId: 's',
        path: notes,
        line: 2,
        limit: 1,
      });
      console.log('line 2 of NOTES.md:', content.trimEnd());
      try {
        await ctx.request(methods.client.fs.readTextFile, { sessionId: 's', path: '/etc/shadow' });
      } catch (error) {
        console.log('outside the workspace:', error.data?.errorKind);
      }
    },
  );
} finally {
  connection.close();
  await broker.close();
}
