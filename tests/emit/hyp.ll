; emit-llvm small.ms hyp float float
; ModuleID = 'm0.'
source_filename = "m0."
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; Function Attrs: mustprogress nofree norecurse nosync nounwind willreturn memory(argmem: readwrite)
define noundef i1 @m0.entry(ptr nocapture readonly %0, ptr nocapture readonly %1, ptr nocapture readnone %2, ptr nocapture writeonly %3) local_unnamed_addr #0 {
entry:
  %4 = getelementptr i8, ptr %1, i64 8
  %pay3 = load double, ptr %4, align 4
  %5 = getelementptr i8, ptr %1, i64 24
  %pay24 = load double, ptr %5, align 4
  %6 = fmul double %pay3, %pay3
  %7 = fmul double %pay24, %pay24
  %8 = fadd double %6, %7
  store i64 4, ptr %3, align 4
  %9 = getelementptr i8, ptr %3, i64 8
  store double %8, ptr %9, align 4
  ret i1 true
}

attributes #0 = { mustprogress nofree norecurse nosync nounwind willreturn memory(argmem: readwrite) }
