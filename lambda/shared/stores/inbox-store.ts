/** The inbox store's former path, still imported by the local twin's chaos run: new code imports `./inbox`. */
export * from './inbox';
