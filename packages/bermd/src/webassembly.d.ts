// The WebAssembly JS API as Node provides it. TypeScript ships these declarations only in its DOM
// library, which does not belong in a server package, so the part bermd uses is declared here.
declare global {
  namespace WebAssembly {
    type ImportExportKind = 'function' | 'table' | 'memory' | 'global' | 'tag';
    interface ModuleExportDescriptor { name: string; kind: ImportExportKind }
    interface ModuleImportDescriptor { module: string; name: string; kind: ImportExportKind }
    type ImportValue = unknown;
    type Imports = Record<string, Record<string, ImportValue>>;
    type Exports = Record<string, unknown>;

    class Module {
      constructor(bytes: ArrayBufferView | ArrayBuffer);
      static exports(module: Module): ModuleExportDescriptor[];
      static imports(module: Module): ModuleImportDescriptor[];
      static customSections(module: Module, sectionName: string): ArrayBuffer[];
    }
    class Instance {
      constructor(module: Module, imports?: Imports);
      readonly exports: Exports;
    }
    class Memory {
      constructor(descriptor: { initial: number; maximum?: number; shared?: boolean });
      readonly buffer: ArrayBuffer;
      grow(delta: number): number;
    }
    class CompileError extends Error {}
    class LinkError extends Error {}
    class RuntimeError extends Error {}

    function compile(bytes: ArrayBufferView | ArrayBuffer): Promise<Module>;
    function validate(bytes: ArrayBufferView | ArrayBuffer): boolean;
    function instantiate(module: Module, imports?: Imports): Promise<Instance>;
  }
}

export {};
