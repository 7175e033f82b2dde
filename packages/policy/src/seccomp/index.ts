export * from './classic-bpf.js';
export * from './sandbox-syscall-rules.js';
export * from './seccomp-decode.js';
export * from './seccomp-program.js';
export * from './syscall-abi.js';
