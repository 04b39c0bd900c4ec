/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* kfunc.h - registration of the module's kfuncs (kfunc.c). */
#ifndef FLOWSKETCH_KMOD_KFUNC_H
#define FLOWSKETCH_KMOD_KFUNC_H

int fs_kfunc_register(void);

#endif /* FLOWSKETCH_KMOD_KFUNC_H */
