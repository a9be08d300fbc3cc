/*
 * A stand-in for bcryptprimitives.dll, which Wine 8 (Debian 12's) lacks:
 * Go's runtime asks it for ProcessPrng at start, and without it no Go
 * program for Windows starts under Wine. Windows 10 and later have the
 * real one; this is for CI's Wine step only (.ci/wine/run builds it with
 * mingw-w64 and copies it into the Wine prefix's system32).
 */
#include <windows.h>
#include <ntsecapi.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG n = len > 0x7fffffff ? 0x7fffffff : (ULONG)len;
        if (!RtlGenRandom(data, n)) return FALSE;
        data += n; len -= n;
    }
    return TRUE;
}
