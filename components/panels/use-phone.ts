"use client";
import { useEffect, useState } from "react";

/** Below Tailwind's `sm` breakpoint (640 px): a phone. Undefined until the page has hydrated (the server cannot tell). */
export function usePhone(): boolean | undefined {
  const [phone, setPhone] = useState<boolean>();
  useEffect(() => {
    const query = window.matchMedia("(max-width: 639px)");
    const update = () => setPhone(query.matches);
    update();
    query.addEventListener("change", update);
    return () => query.removeEventListener("change", update);
  }, []);
  return phone;
}
