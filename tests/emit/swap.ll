; emit-llvm small.ms swap (int,float)
; ModuleID = 'm0.'
source_filename = "m0."
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

define noundef i1 @m0.entry(ptr nocapture readonly %0, ptr nocapture readonly %1, ptr nocapture readnone %2, ptr nocapture writeonly %3) local_unnamed_addr {
entry:
  %scratch9 = alloca [4 x [2 x i64]], align 16
  %4 = load <2 x i64>, ptr %1, align 4
  store <2 x i64> %4, ptr %scratch9, align 16
  %5 = call ptr @mist_rt_tuple_items(ptr nonnull %scratch9, i64 2)
  %6 = getelementptr i8, ptr %5, i64 8
  %pay2 = load i64, ptr %6, align 4
  %7 = getelementptr i8, ptr %5, i64 24
  %pay410 = load double, ptr %7, align 4
  %vals5 = getelementptr inbounds i8, ptr %scratch9, i64 16
  %vals6 = getelementptr inbounds i8, ptr %scratch9, i64 48
  store i64 4, ptr %vals5, align 16
  %8 = getelementptr inbounds i8, ptr %scratch9, i64 24
  store double %pay410, ptr %8, align 8
  %9 = getelementptr inbounds i8, ptr %scratch9, i64 32
  store i64 3, ptr %9, align 16
  %10 = getelementptr inbounds i8, ptr %scratch9, i64 40
  store i64 %pay2, ptr %10, align 8
  call void @mist_rt_tuple(i32 2, ptr nonnull %vals5, ptr nonnull %vals6)
  %11 = load <2 x i64>, ptr %vals6, align 16
  store <2 x i64> %11, ptr %3, align 4
  ret i1 true
}

declare ptr @mist_rt_tuple_items(ptr, i64) local_unnamed_addr

declare void @mist_rt_tuple(i32, ptr, ptr) local_unnamed_addr
