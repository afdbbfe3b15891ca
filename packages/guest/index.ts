// The AssemblyScript entry of @berm/guest: what `import { ... } from "@berm/guest"` gives a harness.
export * from './assembly/index';
