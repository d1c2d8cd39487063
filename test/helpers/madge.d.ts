/** The part of madge's API the import rules use (test/architecture/imports.test.ts). */
declare module 'madge' {
  interface MadgeResult {
    /** Each file (relative to the base folder) and the files it imports. */
    obj(): Record<string, string[]>;
    /** The import circles, each as the files it goes through. */
    circular(): string[][];
  }
  interface MadgeConfig {
    fileExtensions?: string[];
    tsConfig?: string;
    detectiveOptions?: Record<string, Record<string, unknown>>;
  }
  export default function madge(path: string, config?: MadgeConfig): Promise<MadgeResult>;
}
