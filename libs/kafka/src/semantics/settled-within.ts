/** Whether `promise` settled within `timeoutMs` (its rejection counts as settled). */
export async function settledWithin(
  timeoutMs: number,
  promise: Promise<unknown>,
): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
