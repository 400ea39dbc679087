/* elf.h — the few dynamic symbols nytp attach needs from a perl binary or
 * libperl.so, read from the ELF file itself (no libelf).  Only 64-bit
 * little-endian files, the only kind the layout is generated for.  Every
 * offset and size read from the file is checked against the file's size
 * before use: a broken or hostile file is an error, never a crash.
 *
 *     elf_syms s = {.names = names, .n = 3};
 *     if (elf_find_syms(fd, &s, err, sizeof err) == 0) ... s.value[i], s.found[i]
 */
#ifndef NYTP_ATTACH_ELF_H
#define NYTP_ATTACH_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ELF_MAX_SYMS 8

typedef struct elf_syms {
    const char *const *names;   /* in: the symbols wanted */
    size_t n;                   /* in: how many (at most ELF_MAX_SYMS) */
    uint64_t value[ELF_MAX_SYMS];   /* out: st_value of each found */
    bool found[ELF_MAX_SYMS];       /* out: defined in the file */
    uint64_t load_vaddr;        /* out: lowest PT_LOAD p_vaddr, page-aligned */
} elf_syms;

/* Look up s->names in the dynamic symbol table of the ELF file open on
 * fd.  0 when the file was read (each name found or not), -1 with why in
 * err when it is not an ELF file nytp can read. */
int elf_find_syms(int fd, elf_syms *s, char *err, size_t errsize);

#endif
