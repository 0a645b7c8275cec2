; emit-llvm small.ms fib int
; ModuleID = 'm0.'
source_filename = "m0."
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

define internal fastcc { i1, i64 } @m0.fib.0(ptr %0, i32 %1, i64 %2) unnamed_addr {
entry:
  %vals32.i34 = alloca [1 x [2 x i64]], align 16
  %vals25.i35 = alloca [1 x [2 x i64]], align 16
  %vals24.i36 = alloca [2 x [2 x i64]], align 16
  %vals32.i = alloca [1 x [2 x i64]], align 16
  %vals25.i = alloca [1 x [2 x i64]], align 16
  %vals24.i = alloca [2 x [2 x i64]], align 16
  %vals32 = alloca [1 x [2 x i64]], align 16
  %vals25 = alloca [1 x [2 x i64]], align 16
  %vals24 = alloca [2 x [2 x i64]], align 16
  %vm = load ptr, ptr %0, align 8, !invariant.load !0
  %3 = icmp slt i64 %2, 2
  br i1 %3, label %then, label %fast

common.ret:                                       ; preds = %join33, %badtype31, %fail27, %fail21, %fail6, %stop, %then
  %common.ret.op = phi { i1, i64 } [ %4, %then ], [ zeroinitializer, %stop ], [ zeroinitializer, %fail6 ], [ zeroinitializer, %fail21 ], [ zeroinitializer, %fail27 ], [ zeroinitializer, %badtype31 ], [ %87, %join33 ]
  ret { i1, i64 } %common.ret.op

then:                                             ; preds = %entry
  %4 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %2, 1
  br label %common.ret

fast:                                             ; preds = %entry
  %5 = add nsw i64 %2, -1
  %6 = add i32 %1, 1
  %7 = getelementptr i8, ptr %vm, i64 268
  %max = load i32, ptr %7, align 4
  %8 = getelementptr i8, ptr %vm, i64 272
  %limit = load i64, ptr %8, align 4
  %sp = tail call ptr @llvm.stacksave.p0()
  %9 = ptrtoint ptr %sp to i64
  %10 = icmp ugt i64 %limit, %9
  %11 = getelementptr i8, ptr %vm, i64 280
  %interrupt = load volatile i32, ptr %11, align 4
  %12 = getelementptr i8, ptr %vm, i64 288
  %deadline = load double, ptr %12, align 8
  %13 = fcmp ogt double %deadline, 0.000000e+00
  %14 = icmp ne i32 %interrupt, 0
  %15 = or i1 %14, %13
  %16 = icmp sle i32 %max, %1
  %17 = or i1 %16, %10
  %18 = or i1 %17, %15
  br i1 %18, label %slow3, label %go

slow3:                                            ; preds = %fast
  %19 = getelementptr i8, ptr %vm, i64 264
  store i32 %1, ptr %19, align 4
  %20 = tail call i1 @mist_rt_call_check(ptr nonnull %0)
  br i1 %20, label %go, label %stop

go:                                               ; preds = %slow3, %fast
  call void @llvm.lifetime.start.p0(i64 16, ptr nonnull %vals32.i34)
  call void @llvm.lifetime.start.p0(i64 16, ptr nonnull %vals25.i35)
  call void @llvm.lifetime.start.p0(i64 32, ptr nonnull %vals24.i36)
  %21 = icmp eq i64 %2, 2
  br i1 %21, label %then.i59, label %fast.i38

then.i59:                                         ; preds = %go
  %22 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %5, 1
  br label %m0.fib.twin.1.exit60

fast.i38:                                         ; preds = %go
  %23 = add nsw i64 %2, -2
  %24 = add i32 %1, 2
  %max.i39 = load i32, ptr %7, align 4
  %.not.i40 = icmp sgt i32 %max.i39, %6
  br i1 %.not.i40, label %go.i44, label %slow3.i41

slow3.i41:                                        ; preds = %fast.i38
  %25 = getelementptr i8, ptr %vm, i64 264
  store i32 %6, ptr %25, align 4
  %26 = tail call i1 @mist_rt_call_check(ptr nonnull %0)
  br i1 %26, label %go.i44, label %stop.i42

go.i44:                                           ; preds = %slow3.i41, %fast.i38
  %27 = tail call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %24, i64 %23)
  %ok4.i45 = extractvalue { i1, i64 } %27, 0
  br i1 %ok4.i45, label %ok5.i47, label %fail6.i46

stop.i42:                                         ; preds = %slow3.i41
  tail call void @mist_rt_fail(ptr nonnull %0, i32 15)
  br label %m0.fib.twin.1.exit60

ok5.i47:                                          ; preds = %go.i44
  %28 = extractvalue { i1, i64 } %27, 1
  %29 = add nsw i64 %2, -3
  %30 = tail call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %24, i64 %29)
  %ok19.i48 = extractvalue { i1, i64 } %30, 0
  br i1 %ok19.i48, label %ok20.i50, label %fail21.i49

fail6.i46:                                        ; preds = %go.i44
  tail call void @mist_rt_fail(ptr nonnull %0, i32 16)
  br label %m0.fib.twin.1.exit60

ok20.i50:                                         ; preds = %ok5.i47
  %31 = extractvalue { i1, i64 } %30, 1
  %32 = tail call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %28, i64 %31)
  %33 = extractvalue { i64, i1 } %32, 1
  br i1 %33, label %slow23.i53, label %fast22.i51

fail21.i49:                                       ; preds = %ok5.i47
  tail call void @mist_rt_fail(ptr nonnull %0, i32 20)
  br label %m0.fib.twin.1.exit60

fast22.i51:                                       ; preds = %ok20.i50
  %34 = extractvalue { i64, i1 } %32, 0
  br label %join33.i52

slow23.i53:                                       ; preds = %ok20.i50
  store i64 3, ptr %vals24.i36, align 16
  %35 = getelementptr inbounds i8, ptr %vals24.i36, i64 8
  store i64 %28, ptr %35, align 8
  %36 = getelementptr inbounds i8, ptr %vals24.i36, i64 16
  store i64 3, ptr %36, align 16
  %37 = getelementptr inbounds i8, ptr %vals24.i36, i64 24
  store i64 %31, ptr %37, align 8
  %38 = getelementptr i8, ptr %vm, i64 264
  store i32 %6, ptr %38, align 4
  %39 = call i1 @mist_rt_prim(ptr nonnull %0, i32 0, i32 2, ptr nonnull %vals24.i36, ptr nonnull %vals25.i35)
  br i1 %39, label %ok26.i55, label %fail27.i54

ok26.i55:                                         ; preds = %slow23.i53
  %tag28.i56 = load i64, ptr %vals25.i35, align 16
  %40 = getelementptr inbounds i8, ptr %vals25.i35, i64 8
  %pay29.i57 = load i64, ptr %40, align 8
  %41 = icmp eq i64 %tag28.i56, 3
  br i1 %41, label %join33.i52, label %badtype31.i58

fail27.i54:                                       ; preds = %slow23.i53
  call void @mist_rt_fail(ptr nonnull %0, i32 21)
  br label %m0.fib.twin.1.exit60

badtype31.i58:                                    ; preds = %ok26.i55
  store i64 %tag28.i56, ptr %vals32.i34, align 16
  %42 = getelementptr inbounds i8, ptr %vals32.i34, i64 8
  store i64 %pay29.i57, ptr %42, align 8
  %43 = call i1 @mist_rt_bad_value(ptr nonnull %0, ptr nonnull %vals32.i34, i32 22)
  call void @mist_rt_fail(ptr nonnull %0, i32 23)
  br label %m0.fib.twin.1.exit60

join33.i52:                                       ; preds = %ok26.i55, %fast22.i51
  %44 = phi i64 [ %34, %fast22.i51 ], [ %pay29.i57, %ok26.i55 ]
  %45 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %44, 1
  br label %m0.fib.twin.1.exit60

m0.fib.twin.1.exit60:                             ; preds = %then.i59, %stop.i42, %fail6.i46, %fail21.i49, %fail27.i54, %badtype31.i58, %join33.i52
  %common.ret.op.i43 = phi { i1, i64 } [ %22, %then.i59 ], [ zeroinitializer, %stop.i42 ], [ zeroinitializer, %fail6.i46 ], [ zeroinitializer, %fail21.i49 ], [ zeroinitializer, %fail27.i54 ], [ zeroinitializer, %badtype31.i58 ], [ %45, %join33.i52 ]
  call void @llvm.lifetime.end.p0(i64 16, ptr nonnull %vals32.i34)
  call void @llvm.lifetime.end.p0(i64 16, ptr nonnull %vals25.i35)
  call void @llvm.lifetime.end.p0(i64 32, ptr nonnull %vals24.i36)
  %ok4 = extractvalue { i1, i64 } %common.ret.op.i43, 0
  br i1 %ok4, label %ok5, label %fail6

stop:                                             ; preds = %slow3
  tail call void @mist_rt_fail(ptr nonnull %0, i32 3)
  br label %common.ret

ok5:                                              ; preds = %m0.fib.twin.1.exit60
  %46 = extractvalue { i1, i64 } %common.ret.op.i43, 1
  %47 = add nsw i64 %2, -2
  call void @llvm.lifetime.start.p0(i64 16, ptr nonnull %vals32.i)
  call void @llvm.lifetime.start.p0(i64 16, ptr nonnull %vals25.i)
  call void @llvm.lifetime.start.p0(i64 32, ptr nonnull %vals24.i)
  %48 = icmp ult i64 %47, 2
  br i1 %48, label %then.i, label %fast.i

then.i:                                           ; preds = %ok5
  %49 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %47, 1
  br label %m0.fib.twin.1.exit

fast.i:                                           ; preds = %ok5
  %50 = add nsw i64 %2, -3
  %51 = add i32 %1, 2
  %max.i = load i32, ptr %7, align 4
  %.not.i = icmp sgt i32 %max.i, %6
  br i1 %.not.i, label %go.i, label %slow3.i

slow3.i:                                          ; preds = %fast.i
  %52 = getelementptr i8, ptr %vm, i64 264
  store i32 %6, ptr %52, align 4
  %53 = call i1 @mist_rt_call_check(ptr nonnull %0)
  br i1 %53, label %go.i, label %stop.i

go.i:                                             ; preds = %slow3.i, %fast.i
  %54 = call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %51, i64 %50)
  %ok4.i = extractvalue { i1, i64 } %54, 0
  br i1 %ok4.i, label %ok5.i, label %fail6.i

stop.i:                                           ; preds = %slow3.i
  call void @mist_rt_fail(ptr nonnull %0, i32 15)
  br label %m0.fib.twin.1.exit

ok5.i:                                            ; preds = %go.i
  %55 = extractvalue { i1, i64 } %54, 1
  %56 = add nsw i64 %2, -4
  %57 = call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %51, i64 %56)
  %ok19.i = extractvalue { i1, i64 } %57, 0
  br i1 %ok19.i, label %ok20.i, label %fail21.i

fail6.i:                                          ; preds = %go.i
  call void @mist_rt_fail(ptr nonnull %0, i32 16)
  br label %m0.fib.twin.1.exit

ok20.i:                                           ; preds = %ok5.i
  %58 = extractvalue { i1, i64 } %57, 1
  %59 = call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %55, i64 %58)
  %60 = extractvalue { i64, i1 } %59, 1
  br i1 %60, label %slow23.i, label %fast22.i

fail21.i:                                         ; preds = %ok5.i
  call void @mist_rt_fail(ptr nonnull %0, i32 20)
  br label %m0.fib.twin.1.exit

fast22.i:                                         ; preds = %ok20.i
  %61 = extractvalue { i64, i1 } %59, 0
  br label %join33.i

slow23.i:                                         ; preds = %ok20.i
  store i64 3, ptr %vals24.i, align 16
  %62 = getelementptr inbounds i8, ptr %vals24.i, i64 8
  store i64 %55, ptr %62, align 8
  %63 = getelementptr inbounds i8, ptr %vals24.i, i64 16
  store i64 3, ptr %63, align 16
  %64 = getelementptr inbounds i8, ptr %vals24.i, i64 24
  store i64 %58, ptr %64, align 8
  %65 = getelementptr i8, ptr %vm, i64 264
  store i32 %6, ptr %65, align 4
  %66 = call i1 @mist_rt_prim(ptr nonnull %0, i32 0, i32 2, ptr nonnull %vals24.i, ptr nonnull %vals25.i)
  br i1 %66, label %ok26.i, label %fail27.i

ok26.i:                                           ; preds = %slow23.i
  %tag28.i = load i64, ptr %vals25.i, align 16
  %67 = getelementptr inbounds i8, ptr %vals25.i, i64 8
  %pay29.i = load i64, ptr %67, align 8
  %68 = icmp eq i64 %tag28.i, 3
  br i1 %68, label %join33.i, label %badtype31.i

fail27.i:                                         ; preds = %slow23.i
  call void @mist_rt_fail(ptr nonnull %0, i32 21)
  br label %m0.fib.twin.1.exit

badtype31.i:                                      ; preds = %ok26.i
  store i64 %tag28.i, ptr %vals32.i, align 16
  %69 = getelementptr inbounds i8, ptr %vals32.i, i64 8
  store i64 %pay29.i, ptr %69, align 8
  %70 = call i1 @mist_rt_bad_value(ptr nonnull %0, ptr nonnull %vals32.i, i32 22)
  call void @mist_rt_fail(ptr nonnull %0, i32 23)
  br label %m0.fib.twin.1.exit

join33.i:                                         ; preds = %ok26.i, %fast22.i
  %71 = phi i64 [ %61, %fast22.i ], [ %pay29.i, %ok26.i ]
  %72 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %71, 1
  br label %m0.fib.twin.1.exit

m0.fib.twin.1.exit:                               ; preds = %then.i, %stop.i, %fail6.i, %fail21.i, %fail27.i, %badtype31.i, %join33.i
  %common.ret.op.i = phi { i1, i64 } [ %49, %then.i ], [ zeroinitializer, %stop.i ], [ zeroinitializer, %fail6.i ], [ zeroinitializer, %fail21.i ], [ zeroinitializer, %fail27.i ], [ zeroinitializer, %badtype31.i ], [ %72, %join33.i ]
  call void @llvm.lifetime.end.p0(i64 16, ptr nonnull %vals32.i)
  call void @llvm.lifetime.end.p0(i64 16, ptr nonnull %vals25.i)
  call void @llvm.lifetime.end.p0(i64 32, ptr nonnull %vals24.i)
  %ok19 = extractvalue { i1, i64 } %common.ret.op.i, 0
  br i1 %ok19, label %ok20, label %fail21

fail6:                                            ; preds = %m0.fib.twin.1.exit60
  call void @mist_rt_fail(ptr nonnull %0, i32 4)
  br label %common.ret

ok20:                                             ; preds = %m0.fib.twin.1.exit
  %73 = extractvalue { i1, i64 } %common.ret.op.i, 1
  %74 = call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %46, i64 %73)
  %75 = extractvalue { i64, i1 } %74, 1
  br i1 %75, label %slow23, label %fast22

fail21:                                           ; preds = %m0.fib.twin.1.exit
  call void @mist_rt_fail(ptr nonnull %0, i32 8)
  br label %common.ret

fast22:                                           ; preds = %ok20
  %76 = extractvalue { i64, i1 } %74, 0
  br label %join33

slow23:                                           ; preds = %ok20
  store i64 3, ptr %vals24, align 16
  %77 = getelementptr inbounds i8, ptr %vals24, i64 8
  store i64 %46, ptr %77, align 8
  %78 = getelementptr inbounds i8, ptr %vals24, i64 16
  store i64 3, ptr %78, align 16
  %79 = getelementptr inbounds i8, ptr %vals24, i64 24
  store i64 %73, ptr %79, align 8
  %80 = getelementptr i8, ptr %vm, i64 264
  store i32 %1, ptr %80, align 4
  %81 = call i1 @mist_rt_prim(ptr nonnull %0, i32 0, i32 2, ptr nonnull %vals24, ptr nonnull %vals25)
  br i1 %81, label %ok26, label %fail27

ok26:                                             ; preds = %slow23
  %tag28 = load i64, ptr %vals25, align 16
  %82 = getelementptr inbounds i8, ptr %vals25, i64 8
  %pay29 = load i64, ptr %82, align 8
  %83 = icmp eq i64 %tag28, 3
  br i1 %83, label %join33, label %badtype31

fail27:                                           ; preds = %slow23
  call void @mist_rt_fail(ptr nonnull %0, i32 9)
  br label %common.ret

badtype31:                                        ; preds = %ok26
  store i64 %tag28, ptr %vals32, align 16
  %84 = getelementptr inbounds i8, ptr %vals32, i64 8
  store i64 %pay29, ptr %84, align 8
  %85 = call i1 @mist_rt_bad_value(ptr nonnull %0, ptr nonnull %vals32, i32 10)
  call void @mist_rt_fail(ptr nonnull %0, i32 11)
  br label %common.ret

join33:                                           ; preds = %ok26, %fast22
  %86 = phi i64 [ %76, %fast22 ], [ %pay29, %ok26 ]
  %87 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %86, 1
  br label %common.ret
}

declare i1 @mist_rt_prim(ptr, i32, i32, ptr, ptr) local_unnamed_addr

declare void @mist_rt_fail(ptr, i32) local_unnamed_addr

declare i1 @mist_rt_bad_value(ptr, ptr, i32) local_unnamed_addr

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn
declare ptr @llvm.stacksave.p0() #0

declare i1 @mist_rt_call_check(ptr) local_unnamed_addr

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare { i64, i1 } @llvm.sadd.with.overflow.i64(i64, i64) #1

define noundef i1 @m0.entry(ptr %0, ptr nocapture readonly %1, ptr nocapture readnone %2, ptr nocapture writeonly %3) local_unnamed_addr {
entry:
  %vm = load ptr, ptr %0, align 8, !invariant.load !0
  %4 = getelementptr i8, ptr %1, i64 8
  %pay = load i64, ptr %4, align 4
  %5 = getelementptr i8, ptr %vm, i64 264
  %depth = load i32, ptr %5, align 4
  %6 = tail call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %depth, i64 %pay)
  store i32 %depth, ptr %5, align 4
  %7 = extractvalue { i1, i64 } %6, 0
  br i1 %7, label %ok, label %common.ret

common.ret:                                       ; preds = %entry, %ok
  ret i1 %7

ok:                                               ; preds = %entry
  %8 = extractvalue { i1, i64 } %6, 1
  store i64 3, ptr %3, align 4
  %9 = getelementptr i8, ptr %3, i64 8
  store i64 %8, ptr %9, align 4
  br label %common.ret
}

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(argmem: readwrite)
declare void @llvm.lifetime.start.p0(i64 immarg, ptr nocapture) #2

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(argmem: readwrite)
declare void @llvm.lifetime.end.p0(i64 immarg, ptr nocapture) #2

attributes #0 = { mustprogress nocallback nofree nosync nounwind willreturn }
attributes #1 = { mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #2 = { nocallback nofree nosync nounwind willreturn memory(argmem: readwrite) }

!0 = !{}
