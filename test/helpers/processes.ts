/** The process helpers live in lib/cli (the replay build uses them too). */
export * from "@/lib/cli/processes";
