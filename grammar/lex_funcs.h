/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lex_funcs.h - token builders called from policy.l's actions (grammar/lex.c).
 * Included after policy.tab.h, which defines POL_STYPE and the token codes.
 */
#ifndef CORDON_LEX_FUNCS_H
#define CORDON_LEX_FUNCS_H

void lex_advance(struct lex_state *ls, struct pol_loc *l, const char *text, size_t len);
int lex_int(struct lex_state *ls, POL_STYPE *v, const struct pol_loc *l, const char *text);
int lex_float(struct lex_state *ls, POL_STYPE *v, const struct pol_loc *l, const char *text);
int lex_ident(struct lex_state *ls, POL_STYPE *v, const struct pol_loc *l, const char *text, size_t len);
int lex_string(struct lex_state *ls, POL_STYPE *v, const struct pol_loc *l, const char *text, size_t len);
int lex_unterminated(struct lex_state *ls, POL_STYPE *v, const struct pol_loc *l, const char *text, size_t len);
void lex_bad_char(struct lex_state *ls, const struct pol_loc *l, const char *text, size_t len);

#endif
