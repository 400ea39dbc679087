/* elf.c — dynamic symbols of an ELF64 little-endian file, bounds-checked. */
#include "elf.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Tables larger than this are not a perl's: refuse rather than allocate. */
#define ELF_MAX_TABLE (64u << 20)

static bool read_at(int fd, uint64_t size, uint64_t off, void *buf, size_t len)
{
    if (off > size || len > size - off)
        return false;
    size_t got = 0;
    while (got < len) {
        ssize_t r = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        got += (size_t)r;
    }
    return true;
}

static void *read_table(int fd, uint64_t size, uint64_t off, uint64_t len)
{
    if (len == 0 || len > ELF_MAX_TABLE)
        return NULL;
    void *p = malloc((size_t)len);
    if (p && !read_at(fd, size, off, p, (size_t)len)) {
        free(p);
        p = NULL;
    }
    return p;
}

int elf_find_syms(int fd, elf_syms *s, char *err, size_t errsize)
{
    struct stat sb;
    Elf64_Ehdr eh;
    memset(s->found, 0, sizeof s->found);
    if (s->n > ELF_MAX_SYMS) {
        snprintf(err, errsize, "too many symbols asked for");
        return -1;
    }
    if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
        snprintf(err, errsize, "not a regular file");
        return -1;
    }
    uint64_t size = (uint64_t)sb.st_size;
    if (!read_at(fd, size, 0, &eh, sizeof eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
        snprintf(err, errsize, "not an ELF file");
        return -1;
    }
    if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB) {
        snprintf(err, errsize, "not a 64-bit little-endian ELF file");
        return -1;
    }
    /* the load address of the file's first byte */
    s->load_vaddr = UINT64_MAX;
    if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > 4096) {
        snprintf(err, errsize, "ELF file without program headers");
        return -1;
    }
    for (uint32_t i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        if (!read_at(fd, size, eh.e_phoff + (uint64_t)i * sizeof ph, &ph, sizeof ph)) {
            snprintf(err, errsize, "ELF program header %u outside the file", i);
            return -1;
        }
        if (ph.p_type == PT_LOAD && ph.p_vaddr < s->load_vaddr)
            s->load_vaddr = ph.p_vaddr & ~(uint64_t)0xfff;
    }
    if (s->load_vaddr == UINT64_MAX) {
        snprintf(err, errsize, "ELF file with nothing to load");
        return -1;
    }
    if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shnum > 65000) {
        snprintf(err, errsize, "ELF file without section headers");
        return -1;
    }
    Elf64_Shdr *sh = read_table(fd, size, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof *sh);
    if (!sh) {
        snprintf(err, errsize, "ELF section headers outside the file");
        return -1;
    }
    int rc = -1;
    Elf64_Sym *syms = NULL;
    char *str = NULL;
    uint32_t ds = 0;
    for (uint32_t i = 0; i < eh.e_shnum; i++)
        if (sh[i].sh_type == SHT_DYNSYM) {
            ds = i;
            break;
        }
    if (!ds || sh[ds].sh_link >= eh.e_shnum || sh[ds].sh_entsize != sizeof(Elf64_Sym)) {
        snprintf(err, errsize, "no dynamic symbol table");
        goto out;
    }
    const Elf64_Shdr *ss = &sh[sh[ds].sh_link];
    syms = read_table(fd, size, sh[ds].sh_offset, sh[ds].sh_size);
    str = read_table(fd, size, ss->sh_offset, ss->sh_size);
    if (!syms || !str) {
        snprintf(err, errsize, "dynamic symbol table outside the file");
        goto out;
    }
    uint64_t nsym = sh[ds].sh_size / sizeof *syms, strsize = ss->sh_size;
    for (uint64_t k = 0; k < nsym; k++) {
        uint32_t at = syms[k].st_name;
        if (at >= strsize || syms[k].st_shndx == SHN_UNDEF)
            continue;
        const char *name = str + at;
        size_t max = (size_t)(strsize - at);
        for (size_t j = 0; j < s->n; j++)
            if (!s->found[j]) {
                size_t len = strlen(s->names[j]);
                if (len < max && memcmp(name, s->names[j], len + 1) == 0) {
                    s->found[j] = true;
                    s->value[j] = syms[k].st_value;
                }
            }
    }
    rc = 0;
out:
    free(sh);
    free(syms);
    free(str);
    return rc;
}
